package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
)

// leases is client-go's typed Lease client on a fresh stand-in.
func leases(t *testing.T) typedv1.LeaseInterface {
	t.Helper()
	srv := httptest.NewServer(&store{leases: map[string]*coordinationv1.Lease{}})
	t.Cleanup(srv.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"}})
	if err != nil {
		t.Fatal(err)
	}
	return client.CoordinationV1().Leases("default")
}

func newLease(holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "l"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}
}

// An absent Lease is NotFound for a Get and an Update, as client-go's LeaseLock expects
// before it creates one (tryAcquireOrRenew: errors.IsNotFound, then Lock.Create).
func TestAbsentLeaseIsNotFound(t *testing.T) {
	c := leases(t)
	if _, err := c.Get(context.Background(), "l", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get: want NotFound, got %v", err)
	}
	lease := newLease("a")
	lease.ResourceVersion = "1"
	if _, err := c.Update(context.Background(), lease, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("update: want NotFound, got %v", err)
	}
}

// Of two updates on the same resourceVersion one wins and the other gets 409 Conflict;
// each write takes a new resourceVersion; a second create is AlreadyExists.
func TestOneUpdatePerResourceVersion(t *testing.T) {
	c, ctx := leases(t), context.Background()
	created, err := c.Create(ctx, newLease("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, newLease("b"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: want AlreadyExists, got %v", err)
	}
	first, second := created.DeepCopy(), created.DeepCopy()
	holder := "b"
	second.Spec.HolderIdentity = &holder
	won, err := c.Update(ctx, first, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if won.ResourceVersion == created.ResourceVersion {
		t.Fatalf("an update kept resourceVersion %s", won.ResourceVersion)
	}
	if _, err := c.Update(ctx, second, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: want Conflict, got %v", err)
	}
	got, err := c.Get(ctx, "l", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.HolderIdentity != "a" || got.ResourceVersion != won.ResourceVersion {
		t.Fatalf("stored %s at %s, want a at %s", *got.Spec.HolderIdentity,
			got.ResourceVersion, won.ResourceVersion)
	}
}

// Two API servers serve one store over HTTPS; a crash of one refuses new connections and
// fails requests on it, while the other goes on serving the same Lease, over HTTP/2.
func TestACrashedAPIServerFailsAndTheOtherServesTheSameStore(t *testing.T) {
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cert, err := selfSigned(caFile)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}}
	s := &store{leases: map[string]*coordinationv1.Lease{}}
	var clients []typedv1.LeaseInterface
	var endpoints []*endpoint
	for i := range 2 {
		ep, err := listen(s, i, "0")
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = ep.serve(tlsConfig) }()
		t.Cleanup(func() { ep.crash() })
		endpoints = append(endpoints, ep)
		client, err := kubernetes.NewForConfig(&rest.Config{
			Host:            fmt.Sprintf("https://127.0.0.1:%d", ep.port()),
			TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
			ContentConfig:   rest.ContentConfig{ContentType: "application/json"}})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, client.CoordinationV1().Leases("default"))
	}
	ctx := context.Background()
	if _, err := clients[0].Create(ctx, newLease("a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := clients[1].Get(ctx, "l", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.HolderIdentity != "a" {
		t.Fatalf("the other API server read holder %q, want a", *got.Spec.HolderIdentity)
	}
	if reset := endpoints[0].crash(); reset != 1 {
		t.Fatalf("crash reset %d connections, want the client's one", reset)
	}
	// An Update, not a Get: client-go retries a Get after a reset connection (request.go,
	// IsConnectionReset / IsProbableEOF for GET), a second later.
	if _, err := clients[0].Update(ctx, got, metav1.UpdateOptions{}); err == nil {
		t.Fatal("an Update through the crashed API server succeeded")
	}
	if _, err := clients[1].Get(ctx, "l", metav1.GetOptions{}); err != nil {
		t.Fatalf("the other API server failed after the crash: %v", err)
	}
}
