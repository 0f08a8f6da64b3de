package etcdraft

import (
	"fmt"
	"os"
)

// logger is the library's raft.Logger: no timestamps (the library's DefaultLogger prints
// the OS clock, and a node's stderr can go into the trace with stderr: Trace), to stderr
// (stdout is the protocol). Info and Debug only with --verbose: the library logs every
// election at Info, which would only slow a hunt down.
type logger struct {
	prefix  string
	verbose bool
}

func (l *logger) out(level, s string) {
	fmt.Fprintf(os.Stderr, "%s%s %s\n", l.prefix, level, s)
}

func (l *logger) Debug(v ...interface{}) {
	if l.verbose {
		l.out("DEBUG", fmt.Sprint(v...))
	}
}
func (l *logger) Debugf(format string, v ...interface{}) {
	if l.verbose {
		l.out("DEBUG", fmt.Sprintf(format, v...))
	}
}
func (l *logger) Info(v ...interface{}) {
	if l.verbose {
		l.out("INFO", fmt.Sprint(v...))
	}
}
func (l *logger) Infof(format string, v ...interface{}) {
	if l.verbose {
		l.out("INFO", fmt.Sprintf(format, v...))
	}
}
func (l *logger) Warning(v ...interface{})                 { l.out("WARN", fmt.Sprint(v...)) }
func (l *logger) Warningf(format string, v ...interface{}) { l.out("WARN", fmt.Sprintf(format, v...)) }
func (l *logger) Error(v ...interface{})                   { l.out("ERROR", fmt.Sprint(v...)) }
func (l *logger) Errorf(format string, v ...interface{})   { l.out("ERROR", fmt.Sprintf(format, v...)) }

// Fatal panics rather than exits: the Go client then prints the event being handled with
// the stack, and the simulator reports the node's error.
func (l *logger) Fatal(v ...interface{}) { panic("raft: fatal: " + fmt.Sprint(v...)) }
func (l *logger) Fatalf(format string, v ...interface{}) {
	panic("raft: fatal: " + fmt.Sprintf(format, v...))
}
func (l *logger) Panic(v ...interface{}) { panic(fmt.Sprint(v...)) }
func (l *logger) Panicf(format string, v ...interface{}) {
	panic(fmt.Sprintf(format, v...))
}
