// Package mono prints JSON event lines stamped with CLOCK_MONOTONIC, the clock Python's
// time.monotonic() reads, so that the conformance driver can compare the times of events in
// different processes.
package mono

import (
	"encoding/json"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Now is CLOCK_MONOTONIC in seconds (system-wide, like Python's time.monotonic()).
func Now() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

var mu sync.Mutex

// Emit prints one JSON line: {"t": <now>, "ev": ev, ...fields} on stdout.
func Emit(ev string, fields map[string]any) {
	EmitAt(Now(), ev, fields)
}

// EmitAt prints one JSON line stamped t.
func EmitAt(t float64, ev string, fields map[string]any) {
	line := map[string]any{"t": t, "ev": ev}
	for k, v := range fields {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		panic(err)
	}
	mu.Lock()
	defer mu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}
