// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slimcuda/slimcuda/go/internal/fixture"
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
		if fixture.GPURequired() {
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

// A position past the cache (csrc/c_api/sticky_error_test.cc is the C++
// side): the model's own kernel faults — a device-side assert in the default export, a
// write far out of bounds in decoder.py's "oob" export — and the CUDA context is lost for
// the process. The step that meets it returns an *Error naming the CUDA error and saying
// so; every later call on the device fails the same way; nothing hangs or crashes. Each
// case runs in a process of its own: this test binary again, which TestMain sends to
// stickyChild.
func TestDecodePastTheCacheLosesTheContextCleanly(t *testing.T) {
	r := decoder(t)
	for _, variant := range []string{"so", "oob"} {
		if _, err := os.Stat(filepath.Join(r.dir, variant, "model.pt2")); err != nil {
			t.Fatalf("%s: %v (make it with decoder.py --oob)", variant, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // catches a hang only
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "SLIMCUDA_STICKY_CHILD="+variant)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		hung := errors.Is(ctx.Err(), context.DeadlineExceeded) // before cancel, which sets Err too
		cancel()
		require.False(t, hung, "%s: the child hung:\n%s", variant, out.String())
		require.NoError(t, err, "%s:\n%s", variant, out.String())
		require.Contains(t, out.String(), "child: done, 0 failed", variant)
		t.Logf("%s:\n%s", variant, out.String())
	}
}

func stickyChild(variant string) int {
	dir := os.Getenv("SLIMCUDA_DECODER_DIR")
	raw, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	if err != nil {
		fmt.Println("child:", err)
		return 2
	}
	var ref struct {
		MaxPos int64 `json:"max_pos"`
		Vocab  int
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		fmt.Println("child:", err)
		return 2
	}
	bad := ref.MaxPos + 5
	if variant == "oob" {
		bad = 1 << 26
	}
	failed := 0
	expect := func(ok bool, what string) {
		state := "ok"
		if !ok {
			state, failed = "FAILED", failed+1
		}
		fmt.Printf("child: %s: %s\n", state, what)
	}
	lost := func(err error) bool {
		var e *Error
		return errors.As(err, &e) && e.Code == ErrInternal && strings.Contains(e.Message, "lost")
	}
	m, err := Load(filepath.Join(dir, variant, "model.pt2"))
	if err != nil {
		fmt.Println("child: load:", err)
		return 2
	}
	stream, err := NewStream(NonBlocking())
	if err != nil {
		fmt.Println("child:", err)
		return 2
	}
	ids, _ := NewTensor([]int64{1, 1}, Int64, m.Device())
	pos, _ := NewTensor([]int64{1}, Int64, m.Device())
	on := OnStream(stream)
	step := func(p int64) error {
		if err := CopyFromHost(ids, []int64{7}, on); err != nil {
			return err
		}
		if err := CopyFromHost(pos, []int64{p}, on); err != nil {
			return err
		}
		outs, err := m.Run([]*Tensor{ids, pos}, on)
		if err != nil {
			return err
		}
		defer outs[0].Close()
		return CopyToHost(outs[0], make([]float32, ref.Vocab), on)
	}
	expect(step(0) == nil, "a step inside the cache runs")
	err = step(bad)
	fmt.Println("child: the step past the cache:", err)
	expect(lost(err), "the step past the cache is ErrInternal saying the context is lost")
	expect(err != nil && strings.Contains(err.Error(), "cudaError"), "... naming the CUDA error")
	err = step(0)
	fmt.Println("child: a later step:", err)
	expect(lost(err) && strings.Contains(err.Error(), "CUDA device 0 is lost"), "a later step: device 0 is lost")
	_, err = NewTensor([]int64{2}, Float32, m.Device())
	expect(lost(err), "a new CUDA tensor fails the same way")
	_, err = Load(filepath.Join(dir, variant, "model.pt2"))
	expect(lost(err), "a new load fails the same way")
	host, err := NewTensor([]int64{2}, Float32, Device{Type: CPU})
	expect(err == nil, "a CPU tensor still works")
	host.Close()
	ids.Close()
	pos.Close()
	m.Close()
	stream.Close()
	fmt.Printf("child: done, %d failed\n", failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// BenchmarkDecode: one decode step of the export SLIMCUDA_DECODE_BENCH_DIR names (decoder.py's
// output; default SLIMCUDA_DECODER_DIR) per iteration, graphs on, the logits left on the
// device (bench/decode_benchmark's C++ loop, from Go); the cache is reset when it is full.
func BenchmarkDecode(b *testing.B) {
	dir := os.Getenv("SLIMCUDA_DECODE_BENCH_DIR")
	if dir == "" {
		dir = os.Getenv("SLIMCUDA_DECODER_DIR")
	}
	if dir == "" {
		b.Skip("SLIMCUDA_DECODE_BENCH_DIR is not set")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "reference.json"))
	require.NoError(b, err)
	var ref struct {
		Batch    int
		Variants map[string]string
	}
	require.NoError(b, json.Unmarshal(raw, &ref))
	var mp struct {
		MaxPos int `json:"max_pos"`
	}
	require.NoError(b, json.Unmarshal(raw, &mp))
	variant := "archive"
	if _, ok := ref.Variants[variant]; !ok {
		variant = "so"
	}
	m, err := Load(filepath.Join(dir, ref.Variants[variant]), WithCUDAGraphs(GraphsOn))
	require.NoError(b, err)
	defer m.Close()
	stream, err := NewStream(NonBlocking())
	require.NoError(b, err)
	defer stream.Close()
	on := OnStream(stream)
	ids, err := NewTensor([]int64{int64(ref.Batch), 1}, Int64, m.Device())
	require.NoError(b, err)
	defer ids.Close()
	tokens := make([]int64, ref.Batch)
	for i := range tokens {
		tokens[i] = 7
	}
	require.NoError(b, CopyFromHost(ids, tokens, on))
	// Position p at element 2p: each view 16-byte aligned, no host copy between steps.
	table, err := NewTensor([]int64{int64(2 * mp.MaxPos)}, Int64, m.Device())
	require.NoError(b, err)
	defer table.Close()
	host := make([]int64, 2*mp.MaxPos)
	for p := 0; p < mp.MaxPos; p++ {
		host[2*p] = int64(p)
	}
	require.NoError(b, CopyFromHost(table, host, on))
	views := make([]*Tensor, mp.MaxPos)
	for p := range views {
		views[p], err = table.View([]int64{1}, []int64{1}, int64(2*p))
		require.NoError(b, err)
		defer views[p].Close()
	}
	// The first step captures the graph: done, and undone, before the clock starts.
	for p := 0; p < 4; p++ {
		outs, err := m.Run([]*Tensor{ids, views[p]}, on)
		require.NoError(b, err)
		outs[0].Close()
	}
	require.NoError(b, m.ResetState(on))
	require.NoError(b, stream.Synchronize())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := i % mp.MaxPos
		if p == 0 && i > 0 {
			require.NoError(b, m.ResetState(on))
		}
		outs, err := m.Run([]*Tensor{ids, views[p]}, on)
		require.NoError(b, err)
		outs[0].Close()
	}
	require.NoError(b, stream.Synchronize())
	b.ReportMetric(float64(b.N*ref.Batch)/b.Elapsed().Seconds(), "tokens/s")
}
