// SPDX-License-Identifier: Apache-2.0

package opsfixture

import (
	"encoding/binary"
	"math"
)

// IEEE half and bfloat16 conversions, round to nearest even (as csrc/tensor/float16.h).

func floatToHalf(f float32) uint16 {
	x := math.Float32bits(f)
	sign := uint16(x>>16) & 0x8000
	abs := x & 0x7fffffff
	switch {
	case abs > 0x7f800000:
		return sign | 0x7e00
	case abs >= 0x47800000:
		return sign | 0x7c00
	}
	exp := int(abs>>23) - 112
	mant := abs & 0x7fffff
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		m := mant >> shift
		rem, half := mant&((1<<shift)-1), uint32(1)<<(shift-1)
		if rem > half || (rem == half && m&1 == 1) {
			m++
		}
		return sign | uint16(m)
	}
	m := mant >> 13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && m&1 == 1) {
		m++
	}
	h := uint32(exp)<<10 + m
	if h >= 0x7c00 {
		h = 0x7c00
	}
	return sign | uint16(h)
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp, mant := uint32(h>>10)&0x1f, uint32(h&0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0:
		return math.Float32frombits(sign)
	}
	exp = 113
	for mant&0x400 == 0 {
		mant <<= 1
		exp--
	}
	return math.Float32frombits(sign | exp<<23 | (mant&0x3ff)<<13)
}

func floatToBFloat16(f float32) uint16 {
	x := math.Float32bits(f)
	if x&0x7fffffff > 0x7f800000 {
		return uint16(x>>16) | 0x40
	}
	return uint16((x + 0x7fff + (x>>16)&1) >> 16)
}

func bfloat16ToFloat(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

func store(p []byte, dtype string, v float64) {
	switch dtype {
	case "float32":
		binary.LittleEndian.PutUint32(p, math.Float32bits(float32(v)))
	case "float64":
		binary.LittleEndian.PutUint64(p, math.Float64bits(v))
	case "int64":
		binary.LittleEndian.PutUint64(p, uint64(int64(v)))
	case "int32":
		binary.LittleEndian.PutUint32(p, uint32(int32(v)))
	case "int16":
		binary.LittleEndian.PutUint16(p, uint16(int16(v)))
	case "int8", "uint8":
		p[0] = byte(int64(v))
	case "bool":
		p[0] = 0
		if v != 0 {
			p[0] = 1
		}
	case "float16":
		binary.LittleEndian.PutUint16(p, floatToHalf(float32(v)))
	default:
		binary.LittleEndian.PutUint16(p, floatToBFloat16(float32(v)))
	}
}

func load(p []byte, dtype string) float64 {
	switch dtype {
	case "float32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
	case "float64":
		return math.Float64frombits(binary.LittleEndian.Uint64(p))
	case "int64":
		return float64(int64(binary.LittleEndian.Uint64(p)))
	case "int32":
		return float64(int32(binary.LittleEndian.Uint32(p)))
	case "int16":
		return float64(int16(binary.LittleEndian.Uint16(p)))
	case "int8":
		return float64(int8(p[0]))
	case "uint8":
		return float64(p[0])
	case "bool":
		if p[0] != 0 {
			return 1
		}
		return 0
	case "float16":
		return float64(halfToFloat(binary.LittleEndian.Uint16(p)))
	}
	return float64(bfloat16ToFloat(binary.LittleEndian.Uint16(p)))
}
