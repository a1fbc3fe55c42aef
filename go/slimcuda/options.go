// SPDX-License-Identifier: Apache-2.0

//go:build cgo

package slimcuda

// A CallOption adjusts one call. A nil option is skipped, as nil options are everywhere in
// this package (LoadOption, TensorOption, AllocOption, StreamOption).
type CallOption func(*callOptions)

type callOptions struct {
	stream    *Stream
	streamSet bool
}

// OnStream runs the call on s: the C call selects s as the caller stream and restores
// the previous selection before returning. It takes precedence over WithCallerStream.
func OnStream(s *Stream) CallOption {
	return func(o *callOptions) { o.stream, o.streamSet = s, true }
}

func collect(opts []CallOption) callOptions {
	var o callOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}
