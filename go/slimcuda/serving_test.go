// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"
)

// BenchmarkServing is bench/serving_benchmark from Go: one CUDA model (the demo package, or
// $SLIMCUDA_SERVING_PACKAGE), N goroutines each on its own non-blocking stream calling
// Run and waiting for its stream, for instances 1/2/4/8 × callers 1..32 and CUDA graphs off
// and on. It reports runs/s over all callers and p50/p99 call latency; b.N is the number of
// calls each caller makes (go test -bench Serving -benchtime 2000x).
func BenchmarkServing(b *testing.B) {
	requireGPU(b)
	path := os.Getenv("SLIMCUDA_SERVING_PACKAGE")
	if path == "" {
		path = demoPackage(b)
	}
	for _, graphs := range []GraphMode{GraphsOff, GraphsStrict} {
		for _, instances := range []int{1, 2, 4, 8} {
			m, err := Load(path, LoadOnDevice(CUDADevice(0)), WithInstances(instances), WithCUDAGraphs(graphs))
			if err != nil {
				b.Fatal(err)
			}
			for _, callers := range []int{1, 2, 4, 8, 16, 32} {
				name := fmt.Sprintf("graphs=%v/instances=%d/callers=%d", graphs != GraphsOff, instances, callers)
				b.Run(name, func(b *testing.B) { driveServing(b, m, callers) })
			}
			if err := m.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// driveServing runs b.N calls on each of `callers` goroutines and reports the figures.
func driveServing(b *testing.B, m *Model, callers int) {
	spec := m.Inputs()
	lat := make([][]time.Duration, callers)
	errs := make(chan error, callers)
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	for c := 0; c < callers; c++ {
		ready.Add(1)
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			s, err := NewStream(NonBlocking())
			if err != nil {
				ready.Done()
				errs <- err
				return
			}
			defer s.Close()
			inputs := make([]*Tensor, len(spec))
			for i, sp := range spec {
				if inputs[i], err = NewTensor(sp.Sizes, sp.DType, m.Device()); err != nil {
					ready.Done()
					errs <- err
					return
				}
				defer inputs[i].Close()
			}
			lat[c] = make([]time.Duration, 0, b.N)
			ready.Done()
			<-start
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				out, err := m.Run(inputs, OnStream(s))
				if err == nil {
					err = s.Synchronize()
				}
				if err != nil {
					errs <- err
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
				for _, o := range out {
					o.Close()
				}
			}
		}(c)
	}
	ready.Wait()
	b.ResetTimer()
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "runs/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
