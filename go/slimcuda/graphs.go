// SPDX-License-Identifier: Apache-2.0

package slimcuda

// #include "wrappers.h"
import "C"

// GraphMode says whether a CUDA model's runs go through CUDA graphs (WithCUDAGraphs).
type GraphMode int

const (
	// GraphsOff runs every call the normal way (the default).
	GraphsOff GraphMode = 0
	// GraphsOn captures a run into a CUDA graph the first time an instance sees its input
	// layout (dtypes, sizes, strides) on a non-blocking stream, and replays it after; a
	// layout that cannot be captured runs the normal way (GraphStats.Fallbacks counts it).
	GraphsOn GraphMode = 1
	// GraphsStrict is GraphsOn, except that a run that cannot be captured fails with
	// ErrNotSupported and the reason (the model stays usable).
	GraphsStrict GraphMode = 2
)

// WithCUDAGraphs sets the CUDA graph mode of a CUDA model (ignored for CPU models). A
// replay is one launch on the run's stream, where a normal run makes one per kernel: it
// copies the inputs into the graph's own buffers, runs the captured kernels and copies the
// outputs into new tensors. Each graph keeps one run's activations while the model lives, and the
// capture keeps a second copy of the weights a library embeds (docs/graphs.md).
func WithCUDAGraphs(mode GraphMode) LoadOption {
	return func(c *loadConfig) { c.graphs = mode }
}

// GraphStats counts a model's CUDA graph work (all zero with graphs off).
type GraphStats struct {
	Captures  uint64 // graphs made
	Replays   uint64 // runs a graph served
	Fallbacks uint64 // runs that went the normal way because their layout could not be captured
	Graphs    uint64 // graphs alive
}

// GraphStats returns the model's CUDA graph counters (ErrInvalidState after Close).
func (m *Model) GraphStats() (GraphStats, error) {
	if m == nil {
		return GraphStats{}, argError("GraphStats", "nil model")
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return GraphStats{}, &Error{Op: "GraphStats", Code: ErrInvalidState, Message: "model is closed"}
	}
	var s C.slimcuda_graph_stats
	if err := check("GraphStats", C.sc_model_graph_stats(m.h, &s)); err != nil {
		return GraphStats{}, err
	}
	return GraphStats{Captures: uint64(s.captures), Replays: uint64(s.replays), Fallbacks: uint64(s.fallbacks),
		Graphs: uint64(s.graphs)}, nil
}
