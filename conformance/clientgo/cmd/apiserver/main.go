// Command apiserver is a stand-in for the Kubernetes API server's Lease endpoint
// (coordination.k8s.io/v1), with the real server's optimistic concurrency: every write
// takes the next resourceVersion from one counter (etcd's revision), a PUT whose
// metadata.resourceVersion is not the stored one is refused with 409 Conflict (apiserver
// registry/generic/registry/store.go, (*Store).Update), a PUT without one with 422 (the
// Lease strategy allows no unconditional update), a POST of an existing Lease with 409
// AlreadyExists, and a GET or PUT of an absent Lease with 404 NotFound; errors are
// metav1.Status bodies, so client-go's apierrors.IsNotFound / IsConflict see them as from a
// real server. It binds 127.0.0.1 only, prints {"ev":"listening","port":N} and then one JSON
// line per request (CLOCK_MONOTONIC seconds, method, outcome, holder, resourceVersion, the
// listener, the protocol and the client's address).
//
// Several API servers behind a load balancer (-ports P1,P2,...): one listener per port, all
// serving the same store, as kube-apiservers serve one etcd. With -cert-file each serves
// HTTPS with a self-signed certificate for 127.0.0.1 (written there as PEM, the electors' CA),
// so that client-go talks HTTP/2 as it does to a real API server. A line "crash I" on stdin
// crashes listener I (counted from 0) as a killed API server process does: the listener is
// closed (new connections refused) and every connection it accepted is reset (SO_LINGER 0,
// so the peer gets an RST), and requests still running on it end without an answer; it
// prints {"ev":"crashed","listener":I,...}. The other listeners and the store go on.
package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
	ports := flag.String("ports", "", "comma-separated TCP ports on 127.0.0.1, one listener "+
		"(API server) each, all serving one store; replaces -port")
	certFile := flag.String("cert-file", "", "serve HTTPS (HTTP/2) with a self-signed "+
		"certificate for 127.0.0.1, written to this file as PEM")
	flag.Parse()
	list := []string{strconv.Itoa(*port)}
	if *ports != "" {
		list = strings.Split(*ports, ",")
	}
	var tlsConfig *tls.Config
	if *certFile != "" {
		cert, err := selfSigned(*certFile)
		if err != nil {
			fail(err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	s := &store{leases: map[string]*coordinationv1.Lease{}}
	fatal := make(chan error, len(list))
	var endpoints []*endpoint
	var bound []int
	for i, p := range list {
		ep, err := listen(s, i, strings.TrimSpace(p))
		if err != nil {
			fail(err)
		}
		endpoints = append(endpoints, ep)
		bound = append(bound, ep.port())
		go func() {
			if err := ep.serve(tlsConfig); err != nil && !ep.crashed.Load() {
				fatal <- err
			}
		}()
	}
	mono.Emit("listening", map[string]any{"port": bound[0], "ports": bound,
		"tls": tlsConfig != nil})
	go control(endpoints)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-fatal:
		fail(err)
	case <-stop:
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// endpoint is one API server: a listener in front of the shared store.
type endpoint struct {
	store   *store
	index   int
	ln      *trackingListener
	crashed atomic.Bool
}

type listenerKey struct{}

// listen opens API server `index` of store s on 127.0.0.1:port.
func listen(s *store, index int, port string) (*endpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return nil, err
	}
	return &endpoint{store: s, index: index, ln: &trackingListener{Listener: ln}}, nil
}

func (e *endpoint) port() int {
	return e.ln.Addr().(*net.TCPAddr).Port
}

func (e *endpoint) serve(tlsConfig *tls.Config) error {
	srv := &http.Server{Handler: e}
	if tlsConfig == nil {
		return srv.Serve(e.ln)
	}
	// ServeTLS offers h2 by ALPN, as kube-apiserver does.
	srv.TLSConfig = tlsConfig.Clone()
	return srv.ServeTLS(e.ln, "", "")
}

// ServeHTTP serves the store, tagging the request with this listener; after a crash a
// request still running gets no answer (its connection is being reset).
func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if e.crashed.Load() {
		panic(http.ErrAbortHandler)
	}
	e.store.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), listenerKey{}, e.index)))
}

// crash closes the listener and resets every connection it accepted; it returns how many.
func (e *endpoint) crash() int {
	e.crashed.Store(true)
	_ = e.ln.Close()
	return e.ln.resetAll()
}

// trackingListener records the TCP connections it accepts, so that a crash can reset them.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*net.TCPConn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns = append(l.conns, c.(*net.TCPConn))
	return c, nil
}

// resetAll closes every accepted connection with SO_LINGER 0: the peer gets an RST, as
// from a killed process's sockets with data unread, and no FIN handshake.
func (l *trackingListener) resetAll() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		_ = c.SetLinger(0)
		_ = c.Close()
	}
	n := len(l.conns)
	l.conns = nil
	return n
}

// control reads commands from stdin: "crash I". End of input ends nothing.
func control(endpoints []*endpoint) {
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		var i int
		if _, err := fmt.Sscanf(lines.Text(), "crash %d", &i); err != nil || i < 0 ||
			i >= len(endpoints) {
			mono.Emit("error", map[string]any{"command": lines.Text()})
			continue
		}
		t := mono.Now()
		reset := endpoints[i].crash()
		mono.EmitAt(t, "crashed", map[string]any{"listener": i, "reset": reset})
	}
}

// selfSigned makes a certificate for 127.0.0.1 and writes it to path as PEM.
func selfSigned(path string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "conformance-apiserver"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(path, block, 0o600); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
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
	mono.Emit("request", requestFields(r, map[string]any{"method": r.Method, "code": code,
		"holder": holderOf(lease), "rv": lease.ResourceVersion}))
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
	mono.Emit("request", requestFields(r, fields))
	writeJSON(w, int(status.Code), &status)
}

// requestFields adds to a log line the listener that took the request (if any), its
// protocol and the client's address (one per connection).
func requestFields(r *http.Request, fields map[string]any) map[string]any {
	if i, ok := r.Context().Value(listenerKey{}).(int); ok {
		fields["listener"] = i
	}
	fields["proto"] = r.Proto
	fields["remote"] = r.RemoteAddr
	return fields
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
