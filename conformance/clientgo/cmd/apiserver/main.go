// Command apiserver is a stand-in for the Kubernetes API server's Lease endpoint
// (coordination.k8s.io/v1), with the real server's optimistic concurrency: every write
// takes the next resourceVersion from one counter (etcd's revision), a PUT whose
// metadata.resourceVersion is not the stored one is refused with 409 Conflict (apiserver
// registry/generic/registry/store.go, (*Store).Update), a PUT without one with 422 (the
// Lease strategy allows no unconditional update), a POST of an existing Lease with 409
// AlreadyExists, and a GET or PUT of an absent Lease with 404 NotFound; errors are
// metav1.Status bodies, so client-go's apierrors.IsNotFound / IsConflict see them as from a
// real server. It binds 127.0.0.1 only, prints {"ev":"listening","port":N} and then one JSON
// line per request (CLOCK_MONOTONIC seconds, method, outcome, holder, resourceVersion).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"splitbrain/conformance/clientgo/internal/mono"
)

const prefix = "/apis/coordination.k8s.io/v1/namespaces/"

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

type store struct {
	mu       sync.Mutex
	revision int64
	leases   map[string]*coordinationv1.Lease // "ns/name"
}

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: any free one)")
	flag.Parse()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := &store{leases: map[string]*coordinationv1.Lease{}}
	mono.Emit("listening", map[string]any{"port": ln.Addr().(*net.TCPAddr).Port})
	if err := http.Serve(ln, s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// ServeHTTP routes /apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}].
func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, prefix), "/")
	if !strings.HasPrefix(r.URL.Path, prefix) || len(parts) < 2 || len(parts) > 3 ||
		parts[1] != "leases" {
		writeStatus(w, r, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path), nil)
		return
	}
	ns, name := parts[0], ""
	if len(parts) == 3 {
		name = parts[2]
	}
	switch {
	case r.Method == http.MethodGet && name != "":
		s.get(w, r, ns, name)
	case r.Method == http.MethodPost && name == "":
		s.create(w, r, ns)
	case r.Method == http.MethodPut && name != "":
		s.update(w, r, ns, name)
	default:
		writeStatus(w, r, apierrors.NewMethodNotSupported(leaseResource, r.Method), nil)
	}
}

func (s *store) get(w http.ResponseWriter, r *http.Request, ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lease, ok := s.leases[ns+"/"+name]
	if !ok {
		writeStatus(w, r, apierrors.NewNotFound(leaseResource, name), nil)
		return
	}
	writeLease(w, r, http.StatusOK, lease)
}

func (s *store) create(w http.ResponseWriter, r *http.Request, ns string) {
	lease, err := readLease(r)
	if err != nil {
		writeStatus(w, r, apierrors.NewBadRequest(err.Error()), nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ns + "/" + lease.Name
	if _, ok := s.leases[key]; ok {
		writeStatus(w, r, apierrors.NewAlreadyExists(leaseResource, lease.Name), lease)
		return
	}
	s.revision++
	lease.Namespace = ns
	lease.ResourceVersion = strconv.FormatInt(s.revision, 10)
	lease.UID = types.UID(fmt.Sprintf("lease-%d", s.revision))
	lease.CreationTimestamp = metav1.Now()
	s.leases[key] = lease
	writeLease(w, r, http.StatusCreated, lease)
}

func (s *store) update(w http.ResponseWriter, r *http.Request, ns, name string) {
	lease, err := readLease(r)
	if err != nil {
		writeStatus(w, r, apierrors.NewBadRequest(err.Error()), nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, ok := s.leases[ns+"/"+name]
	switch {
	case !ok:
		writeStatus(w, r, apierrors.NewNotFound(leaseResource, name), lease)
		return
	case lease.ResourceVersion == "":
		writeStatus(w, r, apierrors.NewInvalid(schema.GroupKind{Group: leaseResource.Group,
			Kind: "Lease"}, name, field.ErrorList{field.Invalid(
			field.NewPath("metadata", "resourceVersion"), "",
			"must be specified for an update")}), lease)
		return
	case lease.ResourceVersion != stored.ResourceVersion:
		writeStatus(w, r, apierrors.NewConflict(leaseResource, name, fmt.Errorf(
			"the object has been modified; please apply your changes to the latest version "+
				"and try again")), lease)
		return
	}
	s.revision++
	lease.Name, lease.Namespace, lease.UID = name, ns, stored.UID
	lease.CreationTimestamp = stored.CreationTimestamp
	lease.ResourceVersion = strconv.FormatInt(s.revision, 10)
	s.leases[ns+"/"+name] = lease
	writeLease(w, r, http.StatusOK, lease)
}

func readLease(r *http.Request) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	if err := json.NewDecoder(r.Body).Decode(lease); err != nil {
		return nil, err
	}
	return lease, nil
}

func holderOf(lease *coordinationv1.Lease) string {
	if lease == nil || lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}

func writeLease(w http.ResponseWriter, r *http.Request, code int, lease *coordinationv1.Lease) {
	lease.APIVersion, lease.Kind = "coordination.k8s.io/v1", "Lease"
	mono.Emit("request", map[string]any{"method": r.Method, "code": code,
		"holder": holderOf(lease), "rv": lease.ResourceVersion})
	writeJSON(w, code, lease)
}

// writeStatus answers with the error's metav1.Status; `sent` is the Lease the request
// carried, if any (for the log line).
func writeStatus(w http.ResponseWriter, r *http.Request, err *apierrors.StatusError,
	sent *coordinationv1.Lease) {
	status := err.ErrStatus
	status.APIVersion, status.Kind = "v1", "Status"
	fields := map[string]any{"method": r.Method, "code": status.Code,
		"reason": string(status.Reason), "holder": holderOf(sent)}
	if sent != nil {
		fields["rv"] = sent.ResourceVersion
	}
	mono.Emit("request", fields)
	writeJSON(w, int(status.Code), &status)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
