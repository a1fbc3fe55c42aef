// SPDX-License-Identifier: Apache-2.0

// Package helpertest runs a test helper against a stand-in for its testing.TB and reports
// what the helper did to it: a helper that must fail a test (or skip it, with a given
// reason) cannot be checked on the real t, whose failure would fail the checking test.
// Tests only.
package helpertest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// An Outcome is what the helper did.
type Outcome struct {
	Failed, Skipped bool
	// Messages: every Error, Fatal, Skip and Log line, in order, as testing formats them.
	Messages []string
}

// String is the outcome for a test's message: "failed", "skipped" or "passed", then the lines.
func (o Outcome) String() string {
	state := "passed"
	if o.Failed {
		state = "failed"
	} else if o.Skipped {
		state = "skipped"
	}
	return state + ": " + strings.Join(o.Messages, " | ")
}

// Run calls helper with a stand-in for t and returns what it did. Its Fatal and Skip end
// helper as they end a test (runtime.Goexit, on a goroutine of its own); every method the
// stand-in does not take over (TempDir, Setenv, Cleanup, ...) is t's.
func Run(t testing.TB, helper func(tb testing.TB)) Outcome {
	t.Helper()
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(r)
	}()
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	return Outcome{Failed: r.failed, Skipped: r.skipped, Messages: append([]string(nil), r.messages...)}
}

type recorder struct {
	testing.TB
	mu              sync.Mutex
	failed, skipped bool
	messages        []string
}

// line formats as testing does: Sprintln for the args form, Sprintf for the f form.
func line(args []any) string { return strings.TrimSuffix(fmt.Sprintln(args...), "\n") }

func (r *recorder) note(failed, skipped bool, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = r.failed || failed
	r.skipped = r.skipped || skipped
	if msg != "" {
		r.messages = append(r.messages, msg)
	}
}

func (r *recorder) Helper()         {}
func (r *recorder) Log(args ...any) { r.note(false, false, line(args)) }
func (r *recorder) Logf(format string, args ...any) {
	r.note(false, false, fmt.Sprintf(format, args...))
}
func (r *recorder) Fail()             { r.note(true, false, "") }
func (r *recorder) Error(args ...any) { r.note(true, false, line(args)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.note(true, false, fmt.Sprintf(format, args...))
}
func (r *recorder) FailNow()          { r.Fail(); runtime.Goexit() }
func (r *recorder) Fatal(args ...any) { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) SkipNow()         { r.note(false, true, ""); runtime.Goexit() }
func (r *recorder) Skip(args ...any) { r.note(false, true, line(args)); runtime.Goexit() }
func (r *recorder) Skipf(format string, args ...any) {
	r.note(false, true, fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *recorder) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *recorder) Skipped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}
