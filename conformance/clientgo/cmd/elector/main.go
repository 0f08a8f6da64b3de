// Command elector runs one elector of client-go's tools/leaderelection package with a
// resourcelock.LeaseLock against the API server at -server, and prints one JSON line per
// event on stdout, stamped with CLOCK_MONOTONIC seconds ("t"): "start" (just before
// LeaderElector.Run), "get" / "create" / "update" (each call of the lock, with "t0" when it
// began, "ok", the error's reason, and for a get the holder and the raw record it read, the bytes
// client-go compares to decide whether the record changed; the API server stand-in logs resourceVersions),
// "started_leading", "stopped_leading", "new_leader" (client-go's three callbacks) and
// "exit" when Run returns. Like kube-controller-manager, it campaigns once: when it stops
// leading, Run returns and the process exits. Renewals are the "update" calls made while
// leading; the lock is the real LeaseLock, wrapped only to time its calls. Each HTTP request
// also prints "conn" when it has a connection (net/http/httptrace GotConn): its method, the
// connection's local port and whether it was reused, so that a request can be told to go on
// an old connection or a new one. -ca-file (an https -server) and -timeout set the
// rest.Config's TLS CA and Timeout; resourcelock.NewFromKubeconfig sets Timeout to
// max(1s, RenewDeadline/2).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"splitbrain/conformance/clientgo/internal/mono"
)

// timedLock is the real LeaseLock with each call's start, end and outcome printed.
type timedLock struct {
	*resourcelock.LeaseLock
}

func outcome(t0 float64, ev string, err error, fields map[string]any) {
	fields["t0"] = t0
	fields["ok"] = err == nil
	if err != nil {
		fields["reason"] = string(apierrors.ReasonForError(err))
		fields["err"] = err.Error()
	}
	mono.Emit(ev, fields)
}

func (l timedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	t0 := mono.Now()
	rec, raw, err := l.LeaseLock.Get(ctx)
	fields := map[string]any{}
	if rec != nil {
		fields["holder"] = rec.HolderIdentity
		fields["lease_s"] = rec.LeaseDurationSeconds
		// The bytes client-go compares to restart its observedTime (tryAcquireOrRenew).
		fields["raw"] = string(raw)
	}
	outcome(t0, "get", err, fields)
	return rec, raw, err
}

func (l timedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	t0 := mono.Now()
	err := l.LeaseLock.Create(ctx, ler)
	outcome(t0, "create", err, map[string]any{"lease_s": ler.LeaseDurationSeconds})
	return err
}

func (l timedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	t0 := mono.Now()
	err := l.LeaseLock.Update(ctx, ler)
	fields := map[string]any{"lease_s": ler.LeaseDurationSeconds}
	outcome(t0, "update", err, fields)
	return err
}

// tracedTransport prints a "conn" event when each request has its connection.
type tracedTransport struct {
	next http.RoundTripper
}

func (t tracedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	method := r.Method
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		fields := map[string]any{"method": method, "reused": info.Reused}
		if addr, ok := info.Conn.LocalAddr().(*net.TCPAddr); ok {
			fields["local"] = addr.Port
		}
		mono.Emit("conn", fields)
	}}
	return t.next.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
}

func main() {
	server := flag.String("server", "", "API server URL (http://127.0.0.1:PORT)")
	id := flag.String("id", "", "this elector's identity")
	namespace := flag.String("namespace", "default", "the Lease's namespace")
	name := flag.String("lease", "conformance", "the Lease's name")
	leaseDuration := flag.Duration("lease-duration", 15*time.Second, "LeaseDuration")
	renewDeadline := flag.Duration("renew-deadline", 10*time.Second, "RenewDeadline")
	retryPeriod := flag.Duration("retry-period", 2*time.Second, "RetryPeriod")
	caFile := flag.String("ca-file", "", "CA certificate (PEM) of an https -server")
	timeout := flag.Duration("timeout", 0, "the rest.Config's Timeout (0: none)")
	flag.Parse()
	if *server == "" || *id == "" {
		fmt.Fprintln(os.Stderr, "elector: -server and -id are required")
		os.Exit(2)
	}
	config := &rest.Config{Host: *server, QPS: 1000, Burst: 1000, Timeout: *timeout,
		TLSClientConfig: rest.TLSClientConfig{CAFile: *caFile},
		ContentConfig: rest.ContentConfig{ContentType: "application/json",
			AcceptContentTypes: "application/json"},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return tracedTransport{rt}
		}}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	lock := timedLock{&resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: *namespace, Name: *name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: *id},
	}}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          lock,
		LeaseDuration: *leaseDuration,
		RenewDeadline: *renewDeadline,
		RetryPeriod:   *retryPeriod,
		Name:          *name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { mono.Emit("started_leading", map[string]any{}) },
			OnStoppedLeading: func() { mono.Emit("stopped_leading", map[string]any{}) },
			OnNewLeader: func(identity string) {
				mono.Emit("new_leader", map[string]any{"leader": identity})
			},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	mono.Emit("start", map[string]any{"id": *id})
	elector.Run(context.Background())
	mono.Emit("exit", map[string]any{})
}
