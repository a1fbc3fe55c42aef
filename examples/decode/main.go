// SPDX-License-Identifier: Apache-2.0

// Command decode runs greedy decoding over a decode-step model exported by AOTInductor: a
// .pt2 whose forward takes token ids int64 [batch, 1] and a position int64 [1], keeps its
// KV cache in registered buffers, and returns logits [batch, vocab]
// (tools/aoti/decoder.py makes one). Each step's argmax is fed back as the next token; the
// cache is the model's state, one per Load, put back with ResetState. It prints the tokens
// and the decoding speed:
//
//	decode -model decoder/archive/model.pt2 -steps 32 -graphs=true
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/slimcuda/slimcuda/go/slimcuda"
)

func main() {
	path := flag.String("model", "", "the decode-step .pt2 (required)")
	steps := flag.Int("steps", 32, "tokens to decode")
	first := flag.Int64("first", 7, "the first token of every row")
	graphs := flag.Bool("graphs", true, "replay each step as a CUDA graph")
	warmup := flag.Int("warmup", 4, "steps run (and undone with ResetState) before the timed decode")
	flag.Parse()
	if *path == "" || *steps < 1 || *warmup < 0 || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*path, *steps, *first, *graphs, *warmup); err != nil {
		fmt.Fprintln(os.Stderr, "decode:", err)
		os.Exit(1)
	}
}

func run(path string, steps int, first int64, graphs bool, warmup int) error {
	mode := slimcuda.GraphsOff
	if graphs {
		mode = slimcuda.GraphsOn
	}
	m, err := slimcuda.Load(path, slimcuda.WithCUDAGraphs(mode))
	if err != nil {
		return err
	}
	defer m.Close()
	if len(m.Inputs()) != 2 || len(m.Outputs()) != 1 {
		return fmt.Errorf("%s: want a decode step (ids, position) -> logits, not %d inputs and %d outputs", path,
			len(m.Inputs()), len(m.Outputs()))
	}
	if !m.Stateful() {
		fmt.Fprintln(os.Stderr, "decode: note: the model writes none of its constants (no KV cache kept in buffers)")
	}
	batch := int64(1)
	if in := m.Inputs()[0]; len(in.Sizes) == 2 {
		batch = in.Sizes[0]
	}
	stream, err := slimcuda.NewStream(slimcuda.NonBlocking())
	if errors.Is(err, slimcuda.ErrNotSupported) {
		stream = nil // no GPU: a CPU model runs without one
	} else if err != nil {
		return err
	}
	var on []slimcuda.CallOption
	if stream != nil && m.Device().Type == slimcuda.CUDA {
		defer stream.Close()
		on = append(on, slimcuda.OnStream(stream))
	}
	ids, err := slimcuda.NewTensor([]int64{batch, 1}, slimcuda.Int64, m.Device())
	if err != nil {
		return err
	}
	defer ids.Close()
	pos, err := slimcuda.NewTensor([]int64{1}, slimcuda.Int64, m.Device())
	if err != nil {
		return err
	}
	defer pos.Close()

	tokens := make([]int64, batch)
	decodeSteps := func(n int, record [][]int64) ([][]int64, error) {
		for b := range tokens {
			tokens[b] = first
		}
		for s := 0; s < n; s++ {
			record = append(record, append([]int64(nil), tokens...))
			if err := slimcuda.CopyFromHost(ids, tokens, on...); err != nil {
				return nil, err
			}
			if err := slimcuda.CopyFromHost(pos, []int64{int64(s)}, on...); err != nil {
				return nil, err
			}
			outs, err := m.Run([]*slimcuda.Tensor{ids, pos}, on...)
			if err != nil {
				return nil, err
			}
			info, err := outs[0].Info()
			if err != nil {
				outs[0].Close()
				return nil, err
			}
			logits := make([]float32, info.Numel)
			err = slimcuda.CopyToHost(outs[0], logits, on...) // blocking: the step is done
			outs[0].Close()
			if err != nil {
				return nil, err
			}
			vocab := len(logits) / int(batch)
			for b := range tokens {
				tokens[b] = int64(argmax(logits[b*vocab : (b+1)*vocab]))
			}
		}
		return record, nil
	}
	if warmup > 0 {
		if _, err := decodeSteps(warmup, nil); err != nil {
			return err
		}
		if err := m.ResetState(on...); err != nil {
			return err
		}
	}
	start := time.Now()
	record, err := decodeSteps(steps, nil)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	for b := int64(0); b < batch; b++ {
		fmt.Printf("row %d:", b)
		for _, step := range record {
			fmt.Printf(" %d", step[b])
		}
		fmt.Printf(" %d\n", tokens[b])
	}
	perStep := elapsed / time.Duration(steps)
	fmt.Printf("%d steps x batch %d in %v: %.3f ms/step, %.0f tokens/s (graphs %v, copies of the ids in and the "+
		"logits out included)\n", steps, batch, elapsed.Round(time.Microsecond), float64(perStep.Microseconds())/1e3,
		float64(int64(steps)*batch)/elapsed.Seconds(), graphs)
	return nil
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
