// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Decoding with a model that keeps state (docs/state.md): tools/aoti/decoder.py's small
// Llama-shaped decode step, its KV cache in registered buffers, exported on the GPU machine
// with the weights in the library ("so") and in the archive ("archive"). As
// csrc/c_api/decode_test.cc: 32 steps against eager's logits at the same tokens, graphs
// off and on, two loads of one file interleaved, a reset and the sequence again.

type decoderRef struct {
	dir    string
	steps  int
	vocab  int
	tokens []int64
	logits []float32
	absTol float64
	relTol float64
}

// decoder reads SLIMCUDA_DECODER_DIR's reference; skips without a GPU or it, fails for
// either under SLIMCUDA_REQUIRE_GPU=1.
func decoder(t *testing.T) *decoderRef {
	t.Helper()
	requireGPU(t)
	dir := os.Getenv("SLIMCUDA_DECODER_DIR")
	if dir == "" {
		if os.Getenv("SLIMCUDA_REQUIRE_GPU") == "1" {
			t.Fatal("SLIMCUDA_DECODER_DIR is not set (python3 tools/aoti/decoder.py DIR)")
		}
		t.Skip("SLIMCUDA_DECODER_DIR is not set")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	require.NoError(t, err)
	var j struct {
		Steps, Vocab, Batch int
		Tokens              [][]int64
		LogitsFile          string `json:"logits_file"`
		Tolerance           struct{ Abs, Rel float64 }
	}
	require.NoError(t, json.Unmarshal(raw, &j))
	require.Equal(t, 1, j.Batch)
	r := &decoderRef{dir: dir, steps: j.Steps, vocab: j.Vocab, absTol: j.Tolerance.Abs, relTol: j.Tolerance.Rel}
	for _, tok := range j.Tokens {
		r.tokens = append(r.tokens, tok[0])
	}
	b, err := os.ReadFile(filepath.Join(dir, j.LogitsFile))
	require.NoError(t, err)
	require.Len(t, b, 4*j.Steps*j.Vocab)
	r.logits = make([]float32, j.Steps*j.Vocab)
	for i := range r.logits {
		r.logits[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return r
}

// session is one conversation: a loaded decoder and its input tensors.
type session struct {
	m        *Model
	ids, pos *Tensor
	stream   *Stream
}

func (r *decoderRef) open(t *testing.T, variant string, opts ...LoadOption) *session {
	t.Helper()
	m, err := Load(filepath.Join(r.dir, variant, "model.pt2"), opts...)
	require.NoError(t, err)
	s := &session{m: m}
	s.stream, err = NewStream(NonBlocking())
	require.NoError(t, err)
	s.ids, err = NewTensor([]int64{1, 1}, Int64, m.Device())
	require.NoError(t, err)
	s.pos, err = NewTensor([]int64{1}, Int64, m.Device())
	require.NoError(t, err)
	t.Cleanup(func() {
		s.ids.Close()
		s.pos.Close()
		m.Close()
		s.stream.Close()
	})
	return s
}

// step feeds token at pos and returns the logits.
func (s *session) step(t *testing.T, vocab int, token, pos int64) []float32 {
	t.Helper()
	on := OnStream(s.stream)
	require.NoError(t, CopyFromHost(s.ids, []int64{token}, on))
	require.NoError(t, CopyFromHost(s.pos, []int64{pos}, on))
	outs, err := s.m.Run([]*Tensor{s.ids, s.pos}, on)
	require.NoError(t, err)
	defer outs[0].Close()
	logits := make([]float32, vocab)
	require.NoError(t, CopyToHost(outs[0], logits, on))
	return logits
}

// check compares step s's logits with eager's (and eager's choice where its margin is wide).
func (r *decoderRef) check(t *testing.T, got []float32, s int, what string) {
	t.Helper()
	want := r.logits[s*r.vocab : (s+1)*r.vocab]
	worst, at := 0.0, 0
	for v := range want {
		e := math.Abs(float64(got[v]-want[v])) / (r.absTol + r.relTol*math.Abs(float64(want[v])))
		if !(e <= worst) {
			worst, at = e, v
		}
	}
	require.LessOrEqual(t, worst, 1.0, "%s: step %d: logit %d is %v, eager's %v", what, s, at, got[at], want[at])
	sorted := append([]float32(nil), want...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] > sorted[j] })
	if float64(sorted[0]-sorted[1]) > 2*(r.absTol+r.relTol*math.Abs(float64(sorted[0]))) {
		require.Equal(t, argmax(want), argmax(got), "%s: step %d", what, s)
	}
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func (r *decoderRef) decode(t *testing.T, s *session, from, to int, what string) {
	t.Helper()
	for k := from; k < to; k++ {
		r.check(t, s.step(t, r.vocab, r.tokens[k], int64(k)), k, what)
	}
}

func TestDecodeMatchesEager(t *testing.T) {
	r := decoder(t)
	for _, variant := range []string{"so", "archive"} {
		for _, graphs := range []GraphMode{GraphsOff, GraphsOn} {
			s := r.open(t, variant, WithCUDAGraphs(graphs))
			require.True(t, s.m.Stateful())
			require.Equal(t, 1, s.m.Instances())
			r.decode(t, s, 0, r.steps, fmt.Sprintf("%s graphs %d", variant, graphs))
			if graphs == GraphsOn {
				st, err := s.m.GraphStats()
				require.NoError(t, err)
				require.Equal(t, uint64(r.steps), st.Replays)
			}
		}
		_, err := Load(filepath.Join(r.dir, variant, "model.pt2"), WithInstances(2))
		require.ErrorIs(t, err, ErrInvalidArgument)
	}
}

func TestDecodeTwoLoadsInterleavedAndReset(t *testing.T) {
	r := decoder(t)
	for _, variant := range []string{"so", "archive"} {
		a := r.open(t, variant, WithCUDAGraphs(GraphsOn))
		b := r.open(t, variant)
		half := r.steps / 2
		r.decode(t, a, 0, half, variant+" a")
		for k := 0; k < r.steps; k++ {
			if half+k < r.steps {
				r.check(t, a.step(t, r.vocab, r.tokens[half+k], int64(half+k)), half+k, variant+" a")
			}
			r.check(t, b.step(t, r.vocab, r.tokens[k], int64(k)), k, variant+" b")
		}
		require.NoError(t, a.m.ResetState(OnStream(a.stream)))
		r.decode(t, a, 0, r.steps, variant+" a after reset")
	}
}
