// SPDX-License-Identifier: Apache-2.0

package slimcuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Concurrency and bad use of a Model (go test -race -run 'Concurrent' runs these against
// the installed library; csrc/model has the C++ side under TSan).

// concurrentInput is goroutine g's own input for the demo model ([2, 16]).
func concurrentInput(g int) []float32 {
	x := make([]float32, 32)
	for i := range x {
		x[i] = float32((g*37+i*11)%17)/8 - 1
	}
	return x
}

// runDemo runs the demo model once on x (on the call's stream, if any) and returns y.
func runDemo(m *Model, x []float32, opts ...CallOption) ([]float32, error) {
	in, err := NewTensor([]int64{2, 16}, Float32, m.Device())
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if err := CopyFromHost(in, x, opts...); err != nil {
		return nil, err
	}
	out, err := m.Run([]*Tensor{in}, opts...)
	if err != nil {
		return nil, err
	}
	defer out[0].Close()
	y := make([]float32, 16)
	return y, CopyToHost(out[0], y, opts...) // the run's stream
}

// 64 goroutines x 1,000 runs on one model, each on its own stream where a GPU exists (on
// the CPU: no streams), every output bit-exact against a single-threaded reference.
func TestConcurrentRunsOnOneModelAreBitExact(t *testing.T) {
	const goroutines, runs = 64, 1000
	device := CPUDevice
	if n, err := DeviceCount(); err == nil && n > 0 {
		device = CUDADevice(0)
	}
	m, err := Load(demoPackage(t), LoadOnDevice(device), WithInstances(4))
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, 4, m.Instances())
	want := make([][]float32, goroutines)
	for g := range want {
		want[g], err = runDemo(m, concurrentInput(g))
		require.NoError(t, err)
	}
	require.NoError(t, runBitExact(m, goroutines, runs, want))
}

// runBitExact runs the demo model `runs` times from each of `goroutines` goroutines, each on
// its own non-blocking stream on CUDA, and returns the first output that is not bit-exact
// against want[goroutine] (or the first error).
func runBitExact(m *Model, goroutines, runs int, want [][]float32) error {
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var opts []CallOption
			if m.Device().Type == CUDA {
				s, err := NewStream(NonBlocking())
				if err != nil {
					errs <- err
					return
				}
				defer s.Close()
				opts = append(opts, OnStream(s))
			}
			x := concurrentInput(g)
			for r := 0; r < runs; r++ {
				y, err := runDemo(m, x, opts...)
				if err != nil {
					errs <- err
					return
				}
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(want[g][i]) {
						errs <- fmt.Errorf("goroutine %d run %d output %d: %v, want %v", g, r, i, y[i], want[g][i])
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

// With every instance busy, RunContext gives up when its context does, enqueuing nothing.
func TestConcurrentRunContextGivesUpWhenAllInstancesAreBusy(t *testing.T) {
	m, err := Load(demoPackage(t), LoadOnDevice(CPUDevice), WithInstances(2))
	require.NoError(t, err)
	defer m.Close()
	in, err := NewTensor([]int64{2, 16}, Float32, m.Device())
	require.NoError(t, err)
	defer in.Close()
	require.NoError(t, CopyFromHost(in, make([]float32, 32)))
	// Every instance taken, as by two runs in flight.
	<-m.slots
	<-m.slots
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	out, err := m.RunContext(ctx, []*Tensor{in})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Nil(t, out)
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = m.RunContext(canceled, []*Tensor{in})
	require.ErrorIs(t, err, context.Canceled)
	// A free instance: the run goes ahead.
	m.slots <- struct{}{}
	out, err = m.RunContext(context.Background(), []*Tensor{in})
	require.NoError(t, err)
	out[0].Close()
	m.slots <- struct{}{}
	//lint:ignore SA1012 a nil context is bad input, not a panic
	_, err = m.RunContext(nil, []*Tensor{in}) //nolint:staticcheck
	require.ErrorIs(t, err, ErrInvalidArgument)
	// An already-done context with a free instance enqueues nothing either.
	_, err = m.RunContext(canceled, []*Tensor{in})
	require.ErrorIs(t, err, context.Canceled)
}

// runCountInstances runs count_instances (sleeps x microseconds, returns how many runs
// were in flight) and returns y.
func runCountInstances(m *Model, ctx context.Context, us float32) (float32, error) {
	in, err := NewTensor([]int64{1}, Float32, CPUDevice)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if err := CopyFromHost(in, []float32{us}); err != nil {
		return 0, err
	}
	out, err := m.RunContext(ctx, []*Tensor{in})
	if err != nil {
		return 0, err
	}
	defer out[0].Close()
	y := make([]float32, 1)
	return y[0], CopyToHost(out[0], y)
}

// Runs overlap up to the instance count, and the container (which fails a Run when more
// than its instances are in flight) never sees more.
func TestConcurrentRunsUseEveryInstanceAndNoMore(t *testing.T) {
	for _, c := range []struct {
		description string
		opts        []LoadOption
		instances   int
	}{
		{"default on the CPU", nil, 1},
		{"four instances", []LoadOption{WithInstances(4)}, 4},
	} {
		t.Run(c.description, func(t *testing.T) {
			m, err := Load(testModel(t, "count_instances"), c.opts...)
			require.NoError(t, err)
			defer m.Close()
			require.Equal(t, c.instances, m.Instances())
			var mu sync.Mutex
			var most float32
			errs := make(chan error, 16*20)
			var wg sync.WaitGroup
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 20; r++ {
						y, err := runCountInstances(m, context.Background(), 300)
						if err != nil {
							errs <- err
							continue
						}
						mu.Lock()
						most = float32(math.Max(float64(most), float64(y)))
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.LessOrEqual(t, most, float32(c.instances))
			if c.instances > 1 {
				require.GreaterOrEqual(t, most, float32(2), "runs never overlapped")
			}
		})
	}
}

// Close while runs are in flight waits for them: each run either completes (and its output
// is readable after Close) or, starting after Close, reports ErrInvalidState. Never a crash.
func TestConcurrentCloseWaitsForRunsInFlight(t *testing.T) {
	m, err := Load(testModel(t, "count_instances"), WithInstances(2))
	require.NoError(t, err)
	results := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			_, err := runCountInstances(m, context.Background(), 20000) // 20 ms each
			results <- err
		}()
	}
	// Wait until both instances are taken: two runs are in flight (or about to enter C).
	for deadline := time.Now().Add(10 * time.Second); len(m.slots) > 0; {
		require.True(t, time.Now().Before(deadline), "the runs never started")
		runtime.Gosched()
	}
	start := time.Now()
	require.NoError(t, m.Close())
	require.GreaterOrEqual(t, time.Since(start), 5*time.Millisecond, "Close did not wait for the runs in flight")
	ok := 0
	for g := 0; g < 8; g++ {
		if err := <-results; err != nil {
			require.ErrorIs(t, err, ErrInvalidState)
			continue
		}
		ok++
	}
	require.GreaterOrEqual(t, ok, 2, "the two runs in flight when Close was called must complete")
	_, err = m.RunContext(context.Background(), nil)
	require.ErrorIs(t, err, ErrInvalidState, "a run on a closed model")
	_, err = m.Run(nil)
	require.ErrorIs(t, err, ErrInvalidState)
}

func TestConcurrentLoadRejectsBadInstanceCounts(t *testing.T) {
	for _, n := range []int{-1, 65} {
		_, err := Load(demoPackage(t), WithInstances(n))
		require.ErrorIs(t, err, ErrInvalidArgument, "%d instances", n)
		_, err = LoadBytes([]byte("x"), WithInstances(n))
		require.ErrorIs(t, err, ErrInvalidArgument, "%d instances", n)
	}
	var nilModel *Model
	require.Equal(t, 0, nilModel.Instances())
	_, err := nilModel.RunContext(context.Background(), nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.False(t, errors.Is(err, context.Canceled))
}
