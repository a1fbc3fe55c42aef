// SPDX-License-Identifier: Apache-2.0

// Package npy reads and writes NumPy .npy files (format versions 1.0, 2.0 and 3.0): the
// tensor files of the slimcuda CLI's -inputs and -save, and a way for a service to read
// tensors saved from Python with numpy.save.
//
// The format is small and documented (numpy.lib.format, NEP 1): a magic string, a version,
// a header length and a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': ...}
// followed by the raw elements. This package reads it itself rather than through a Go .npy
// library: it reads files from users, so the header is parsed by a strict grammar with
// every size checked (rank, element count, byte count against the file) before anything is
// allocated, bfloat16 needs a convention of ours (below), and the reader is fuzzed
// (FuzzRead). github.com/sbinet/npyio, the maintained Go library, decodes into
// reflect-typed values sized from the header and knows no bfloat16.
//
// Element types (the descr, little-endian or byte-order-free only): '|b1' bool, '|u1'
// uint8, '|i1' int8, '<i2' int16, '<i4' int32, '<i8' int64, '<f2' float16, '<f4' float32,
// '<f8' float64, and bfloat16 as '<u2'.
//
// bfloat16: NumPy has no bfloat16, and PyTorch cannot turn a bfloat16 tensor into a NumPy
// array, so a bfloat16 tensor is stored as its raw 16-bit patterns with descr '<u2' (what
// numpy.save writes for t.view(torch.int16).numpy().view(numpy.uint16)). slimcuda has no
// uint16 dtype, so '<u2' is unambiguous here. '<V2' (a 2-byte opaque type, what some
// bfloat16 extension types save as) is read as bfloat16 too. Write writes '<u2'.
//
// Not supported (an error says so): big-endian data, fortran_order True, object or
// structured dtypes, and dtypes slimcuda has no equivalent of (uint16 except as bfloat16,
// uint32, uint64, complex).
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// DType is an element type, named as slimcuda names it ("float32", "bfloat16", ...).
type DType string

// The element types .npy files can carry for slimcuda.
const (
	Bool     DType = "bool"
	Uint8    DType = "uint8"
	Int8     DType = "int8"
	Int16    DType = "int16"
	Int32    DType = "int32"
	Int64    DType = "int64"
	Float16  DType = "float16"
	Float32  DType = "float32"
	Float64  DType = "float64"
	BFloat16 DType = "bfloat16"
)

var descrs = map[string]DType{
	"|b1": Bool, "|u1": Uint8, "|i1": Int8, "<i2": Int16, "<i4": Int32, "<i8": Int64,
	"<f2": Float16, "<f4": Float32, "<f8": Float64, "<u2": BFloat16, "<V2": BFloat16, "|V2": BFloat16,
	// Byte-order marks NumPy accepts for single-byte types.
	"<b1": Bool, "<u1": Uint8, "<i1": Int8, "=b1": Bool, "=u1": Uint8, "=i1": Int8,
}

var writeDescr = map[DType]string{
	Bool: "|b1", Uint8: "|u1", Int8: "|i1", Int16: "<i2", Int32: "<i4", Int64: "<i8",
	Float16: "<f2", Float32: "<f4", Float64: "<f8", BFloat16: "<u2",
}

// Size returns the bytes per element of d (0 for an unknown dtype).
func (d DType) Size() int {
	switch d {
	case Bool, Uint8, Int8:
		return 1
	case Int16, Float16, BFloat16:
		return 2
	case Int32, Float32:
		return 4
	case Int64, Float64:
		return 8
	}
	return 0
}

// Limits of what Read accepts.
const (
	MaxRank        = 25      // slimcuda's tensor rank limit
	maxHeaderBytes = 1 << 16 // NumPy itself writes headers of a few hundred bytes
)

var magic = []byte("\x93NUMPY")

// Array is one .npy file: its element type, its shape (row-major) and its raw little-endian
// elements.
type Array struct {
	DType DType
	Shape []int64
	Data  []byte
}

// Numel returns the number of elements of the shape.
func (a Array) Numel() int64 {
	n := int64(1)
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

// ErrFormat marks every malformed-file error.
var ErrFormat = errors.New("npy: malformed file")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// Read reads one .npy file from r. maxBytes caps the data: a header declaring more is
// refused before anything is allocated for it. The data must end the file.
func Read(r io.Reader, maxBytes int64) (Array, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return Array{}, formatErr("no .npy preamble: %v", err)
	}
	if !bytes.Equal(pre[:6], magic) {
		return Array{}, formatErr("not a .npy file (no \\x93NUMPY magic)")
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Array{}, formatErr("short header length: %v", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return Array{}, formatErr("short header length: %v", err)
		}
		n := binary.LittleEndian.Uint32(b[:])
		if n > maxHeaderBytes {
			return Array{}, formatErr("header of %d bytes, more than %d", n, maxHeaderBytes)
		}
		hlen = int(n)
	default:
		return Array{}, formatErr("format version %d.%d is not supported (1.0, 2.0, 3.0 are)", pre[6], pre[7])
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(r, header); err != nil {
		return Array{}, formatErr("header shorter than its declared %d bytes", hlen)
	}
	a, err := parseHeader(string(header))
	if err != nil {
		return Array{}, err
	}
	n, err := byteCount(a.Shape, a.DType.Size(), maxBytes)
	if err != nil {
		return Array{}, err
	}
	a.Data = make([]byte, n)
	if _, err := io.ReadFull(r, a.Data); err != nil {
		return Array{}, formatErr("%d data bytes declared (%s %v), fewer in the file", n, a.DType, a.Shape)
	}
	var extra [1]byte
	if k, _ := r.Read(extra[:]); k != 0 {
		return Array{}, formatErr("bytes after the %d data bytes the header declares (%s %v)", n, a.DType, a.Shape)
	}
	return a, nil
}

// byteCount multiplies shape by elem without overflow, refusing more than maxBytes.
func byteCount(shape []int64, elem int, maxBytes int64) (int64, error) {
	n := int64(elem)
	for _, d := range shape {
		if d == 0 {
			return 0, nil
		}
	}
	for _, d := range shape {
		if d > maxBytes/n {
			return 0, formatErr("shape %v of %d-byte elements is more than %d bytes", shape, elem, maxBytes)
		}
		n *= d
	}
	if n > maxBytes {
		return 0, formatErr("shape %v of %d-byte elements is more than %d bytes", shape, elem, maxBytes)
	}
	return n, nil
}

// parseHeader parses the header dict: exactly the keys descr, fortran_order and shape.
func parseHeader(h string) (Array, error) {
	p := &parser{s: strings.TrimRight(h, " \n\x00")}
	var a Array
	seen := map[string]bool{}
	if !p.eat('{') {
		return a, formatErr("header is not a dict: %.60q", h)
	}
	for !p.eat('}') {
		key, err := p.str()
		if err != nil {
			return a, err
		}
		if seen[key] {
			return a, formatErr("header repeats key %q", key)
		}
		seen[key] = true
		if !p.eat(':') {
			return a, formatErr("header: no ':' after %q", key)
		}
		switch key {
		case "descr":
			d, err := p.str()
			if err != nil {
				return a, err
			}
			dt, ok := descrs[d]
			if !ok {
				if strings.HasPrefix(d, ">") {
					return a, formatErr("big-endian dtype %q is not supported (save little-endian data)", d)
				}
				return a, formatErr("dtype %q has no slimcuda equivalent", d)
			}
			a.DType = dt
		case "fortran_order":
			switch {
			case p.word("False"):
			case p.word("True"):
				return a, formatErr("fortran_order True is not supported (save a C-contiguous array)")
			default:
				return a, formatErr("header: fortran_order is not True or False")
			}
		case "shape":
			if a.Shape, err = p.tuple(); err != nil {
				return a, err
			}
		default:
			return a, formatErr("header: unknown key %q", key)
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return a, formatErr("header: no ',' or '}' after %q", key)
			}
			break
		}
	}
	if p.skip(); p.i != len(p.s) {
		return a, formatErr("header: text after the dict")
	}
	if !seen["descr"] || !seen["fortran_order"] || !seen["shape"] {
		return a, formatErr("header lacks descr, fortran_order or shape")
	}
	return a, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) word(w string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str parses a quoted string without escapes (what NumPy writes for keys and descrs).
func (p *parser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", formatErr("header: a string was expected at byte %d", p.i)
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", formatErr("header: unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsRune(v, '\\') {
		return "", formatErr("header: escapes in strings are not supported")
	}
	p.i += end + 2
	return v, nil
}

// tuple parses a shape: (), (n,), (n, m, ...) of non-negative integers, at most MaxRank.
func (p *parser) tuple() ([]int64, error) {
	if !p.eat('(') {
		return nil, formatErr("header: shape is not a tuple")
	}
	shape := []int64{}
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, formatErr("header: shape holds something other than non-negative integers")
		}
		d, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil || d > math.MaxInt64/2 {
			return nil, formatErr("header: shape size %.20s is out of range", p.s[p.i:j])
		}
		p.i = j
		p.skip()
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2's long suffix
			p.i++
		}
		if shape = append(shape, d); len(shape) > MaxRank {
			return nil, formatErr("header: shape has more than %d dimensions", MaxRank)
		}
		if !p.eat(',') {
			if !p.eat(')') {
				return nil, formatErr("header: shape tuple not closed")
			}
			break
		}
	}
	return shape, nil
}

// Write writes a as a version 1.0 .npy file (2.0 when the header needs it), as numpy.save
// does. len(a.Data) must be the shape's element count times the dtype's size.
func Write(w io.Writer, a Array) error {
	descr, ok := writeDescr[a.DType]
	if !ok {
		return fmt.Errorf("npy: cannot write dtype %q", a.DType)
	}
	if n, err := byteCount(a.Shape, a.DType.Size(), math.MaxInt64); err != nil || n != int64(len(a.Data)) {
		return fmt.Errorf("npy: %d data bytes for %s %v", len(a.Data), a.DType, a.Shape)
	}
	dims := make([]string, len(a.Shape))
	for i, d := range a.Shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	shape := "(" + strings.Join(dims, ", ")
	if len(dims) == 1 {
		shape += ","
	}
	shape += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	// Pad with spaces and a newline so the data starts 64-byte aligned.
	version, lenBytes := byte(1), 2
	total := len(magic) + 2 + lenBytes + len(dict) + 1
	if pad := (64 - total%64) % 64; len(dict)+pad+1 > math.MaxUint16 {
		version, lenBytes = 2, 4
		total = len(magic) + 2 + lenBytes + len(dict) + 1
	}
	header := dict + strings.Repeat(" ", (64-total%64)%64) + "\n"
	var buf bytes.Buffer
	buf.Write(magic)
	buf.Write([]byte{version, 0})
	if version == 1 {
		_ = binary.Write(&buf, binary.LittleEndian, uint16(len(header)))
	} else {
		_ = binary.Write(&buf, binary.LittleEndian, uint32(len(header)))
	}
	buf.WriteString(header)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	_, err := w.Write(a.Data)
	return err
}
