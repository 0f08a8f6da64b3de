package splitbrain

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// PanicError is the error Serve returns when a handler panics.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
	// Event is the event line being handled.
	Event string
}

// Error describes the panic, its event and its stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("splitbrain: panic in a handler: %v\nwhile handling %s\n\n%s", e.Value, e.Event, e.Stack)
}

// Serve runs h over r and w: it reads one event per line from r, writes one reply per line
// to w (flushed after every reply), and returns nil when r ends (EOF). It returns an error if
// the spec is invalid, an event cannot be read, a handler misuses an effect (see
// [Node.Step]), a handler panics (a *PanicError), or reading or writing fails.
func Serve(spec Spec, h Handler, r io.Reader, w io.Writer) error {
	node, err := NewNode(spec, h)
	if err != nil {
		return err
	}
	in := bufio.NewReaderSize(r, 1<<20)
	out := bufio.NewWriterSize(w, 1<<16)
	var long []byte // a line longer than the reader's buffer, assembled
	for {
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = in.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("splitbrain: reading the events: %w", err)
		}
		eof := err != nil
		if len(bytes.TrimSpace(line)) > 0 {
			reply, err := step(node, line)
			if err != nil {
				return err
			}
			out.Write(reply)
			out.WriteByte('\n')
			if err := out.Flush(); err != nil {
				return fmt.Errorf("splitbrain: writing a reply: %w", err)
			}
		}
		if eof {
			return nil
		}
	}
}

// step is node.Step with a handler's panic turned into a *PanicError.
func step(node *Node, line []byte) (reply []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack(), Event: truncate(line)}
		}
	}()
	return node.Step(line)
}

// Run is the main loop of a node process: Serve on stdin and stdout. Within Run, os.Stdout
// is redirected to stderr, so that a stray fmt.Println cannot corrupt the protocol (stderr is
// the node's log). Run returns when stdin ends; on any error, a handler's panic included, it
// prints the error (with the panic's stack) to stderr and exits with status 1.
func Run(spec Spec, h Handler) {
	stdout := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = stdout }()
	if err := Serve(spec, h, os.Stdin, stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
