// SPDX-License-Identifier: Apache-2.0

package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// file builds a .npy file of the given version around a header dict and data, padded as
// numpy.save pads (to 64 bytes, newline last).
func file(version byte, dict string, data []byte) []byte {
	lenBytes := 2
	if version > 1 {
		lenBytes = 4
	}
	h := dict
	for (len(magic)+2+lenBytes+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := append([]byte{}, magic...)
	b = append(b, version, 0)
	if lenBytes == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
	}
	return append(append(b, h...), data...)
}

func TestReadsWhatNumPyWrites(t *testing.T) {
	data := make([]byte, 24)
	for _, tc := range []struct {
		description string
		file        []byte
		dtype       DType
		shape       []int64
	}{
		{"version 1.0, float32 2x3", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data), Float32, []int64{2, 3}},
		{"version 2.0", file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data), Float32, []int64{2, 3}},
		{"version 3.0", file(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data), Float32, []int64{2, 3}},
		{"a scalar", file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", []byte{1}), Bool, []int64{}},
		{"1-d, keys in another order", file(1, "{'shape': (3,), 'fortran_order': False, 'descr': '<i8'}", data), Int64, []int64{3}},
		{"empty", file(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (0, 4), }", nil), Float16, []int64{0, 4}},
		{"uint8", file(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (24,), }", data), Uint8, []int64{24}},
		{"bfloat16 as <u2", file(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (12,), }", data), BFloat16, []int64{12}},
		{"bfloat16 as <V2", file(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (12,), }", data), BFloat16, []int64{12}},
		{"float64", file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", data), Float64, []int64{3}},
	} {
		t.Run(tc.description, func(t *testing.T) {
			a, err := Read(bytes.NewReader(tc.file), 1<<20)
			require.NoError(t, err)
			require.Equal(t, tc.dtype, a.DType)
			require.Equal(t, tc.shape, a.Shape)
			require.Len(t, a.Data, int(a.Numel())*tc.dtype.Size())
		})
	}
}

func TestRefusesMalformedFiles(t *testing.T) {
	ok := "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
	data := make([]byte, 24)
	for _, tc := range []struct {
		description string
		file        []byte
		want        string
	}{
		{"empty file", nil, "preamble"},
		{"no magic", []byte("PK\x03\x04 not numpy at all"), "magic"},
		{"version 4", file(4, ok, data), "version 4.0"},
		{"short data", file(1, ok, data[:20]), "fewer"},
		{"data after the array", file(1, ok, append(data, 0)), "after"},
		{"big-endian", file(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data), "big-endian"},
		{"fortran order", file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data), "fortran_order"},
		{"complex", file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", data), "no slimcuda equivalent"},
		{"object", file(1, "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", data), "no slimcuda equivalent"},
		{"structured", file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", data), "string"},
		{"negative size", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", data), "non-negative"},
		{"over the byte cap", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", data), "more than"},
		{"overflowing shape", file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387903, 4611686018427387903), }", data), "more than"},
		{"rank 26", file(1, "{'descr': '|u1', 'fortran_order': False, 'shape': ("+strings.Repeat("1, ", 26)+"), }", data[:1]), "dimensions"},
		{"missing key", file(1, "{'descr': '<f4', 'shape': (2, 3), }", data), "lacks"},
		{"unknown key", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", data), "unknown key"},
		{"repeated key", file(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", data), "repeats"},
		{"not a dict", file(1, "['descr']", data), "not a dict"},
		{"unterminated", file(1, "{'descr: '<f4'", data), "header"},
		{"header longer than the file", append(append([]byte{}, magic...), 1, 0, 0xff, 0x7f, '{'), "header shorter"},
	} {
		t.Run(tc.description, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.file), 1<<30)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrFormat), "%v", err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestWriteReadsBack(t *testing.T) {
	for _, dt := range []DType{Bool, Uint8, Int8, Int16, Int32, Int64, Float16, Float32, Float64, BFloat16} {
		for _, shape := range [][]int64{{}, {5}, {2, 3}, {0, 7}, {1, 2, 1, 3}} {
			a := Array{DType: dt, Shape: shape}
			a.Data = make([]byte, int(a.Numel())*dt.Size())
			for i := range a.Data {
				a.Data[i] = byte(i * 7)
			}
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, a))
			hlen := int(binary.LittleEndian.Uint16(buf.Bytes()[8:10]))
			require.Zero(t, (10+hlen)%64, "data 64-byte aligned, as numpy.save writes")
			got, err := Read(&buf, 1<<20)
			require.NoError(t, err, "%s %v", dt, shape)
			require.Equal(t, a, got)
		}
	}
	require.Error(t, Write(&bytes.Buffer{}, Array{DType: Float32, Shape: []int64{2}, Data: make([]byte, 4)}))
	require.Error(t, Write(&bytes.Buffer{}, Array{DType: "uint32", Shape: []int64{1}, Data: make([]byte, 4)}))
}

// FuzzRead: Read never panics or allocates past its cap on any input, and whatever it
// accepts writes back to a file it reads identically.
func FuzzRead(f *testing.F) {
	f.Add(file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", make([]byte, 24)))
	f.Add(file(2, "{'descr': '<u2', 'fortran_order': False, 'shape': (), }", make([]byte, 2)))
	f.Add(file(3, "{'shape': (0,), 'descr': '|b1', 'fortran_order': False}", nil))
	f.Add([]byte("\x93NUMPY\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Read(bytes.NewReader(data), 1<<16)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error without ErrFormat: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatalf("accepted %s %v but cannot write it: %v", a.DType, a.Shape, err)
		}
		b, err := Read(&buf, 1<<16)
		if err != nil || b.DType != a.DType || !bytes.Equal(b.Data, a.Data) || len(b.Shape) != len(a.Shape) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
