// Package kubetest is an API server for tests where no cluster runs: it
// keeps the objects posted to it in memory, by path, as a Kubernetes API
// server's storage would, and answers reads, label-selected lists and
// deletes of them with the API server's status codes. It validates
// nothing and runs no controller; a real cluster is the kube-node
// tests' (make kube-check).
package kubetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Server is a running in-memory API server at URL, reached with
// Client() (kube.NewAPIAt).
type Server struct {
	*httptest.Server
	mu      sync.Mutex
	objects map[string]json.RawMessage // by object path
}

// Start starts a Server, stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{objects: map[string]json.RawMessage{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Count is how many objects the collection at path holds.
func (s *Server) Count(collection string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.under(collection))
}

// under are the paths of the objects directly in collection, sorted.
func (s *Server) under(collection string) []string {
	var paths []string
	for p := range s.objects {
		if path.Dir(p) == collection {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := path.Clean(r.URL.Path)
	switch r.Method {
	case http.MethodPost:
		var o struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		var raw json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil || json.Unmarshal(raw, &o) != nil || o.Metadata.Name == "" {
			status(w, http.StatusBadRequest, "an object with a metadata.name is required")
			return
		}
		at := p + "/" + o.Metadata.Name
		if _, ok := s.objects[at]; ok {
			status(w, http.StatusConflict, o.Metadata.Name+" already exists")
			return
		}
		s.objects[at] = raw
		w.WriteHeader(http.StatusCreated)
		w.Write(raw)
	case http.MethodGet:
		if o, ok := s.objects[p]; ok {
			w.Write(o)
			return
		}
		items := []json.RawMessage{}
		for _, at := range s.under(p) {
			if matches(s.objects[at], r.URL.Query().Get("labelSelector")) {
				items = append(items, s.objects[at])
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	case http.MethodDelete:
		if _, ok := s.objects[p]; !ok {
			status(w, http.StatusNotFound, path.Base(p)+" not found")
			return
		}
		delete(s.objects, p)
		status(w, http.StatusOK, "")
	default:
		status(w, http.StatusMethodNotAllowed, r.Method+" is not supported")
	}
}

// matches says the object's labels hold every key=value of selector.
func matches(obj json.RawMessage, selector string) bool {
	var o struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	json.Unmarshal(obj, &o)
	for _, kv := range strings.Split(selector, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && o.Metadata.Labels[k] != v {
			return false
		}
	}
	return true
}

func status(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(metav1.Status{Status: http.StatusText(code), Message: msg, Code: int32(code)})
}
