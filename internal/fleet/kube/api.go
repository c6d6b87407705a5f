package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// API is a Kubernetes API server as obsbench uses it: objects sent and
// read as JSON at their REST paths, over client-go's transport (the
// kubeconfig's or the service account's credentials, TLS, token
// refresh). Not client-go's typed clientset: that one builds every API
// group Kubernetes has, which made most of obsbench's compile time, for
// the four kinds a launch creates.
type API struct {
	http *http.Client
	base *url.URL
}

// NewAPI is the API server cfg reaches.
func NewAPI(cfg *rest.Config) (*API, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes API server address: %w", err)
	}
	return &API{http: hc, base: base}, nil
}

// NewAPIAt is the API server at base, reached with hc.
func NewAPIAt(base string, hc *http.Client) (*API, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("kubernetes API server address: %w", err)
	}
	return &API{http: hc, base: u}, nil
}

// collections are the REST paths of the kinds obsbench creates and reads.
var collections = map[string]string{
	"Secret":        "/api/v1/namespaces/%s/secrets",
	"Service":       "/api/v1/namespaces/%s/services",
	"Pod":           "/api/v1/namespaces/%s/pods",
	"EndpointSlice": "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices",
	"Job":           "/apis/batch/v1/namespaces/%s/jobs",
}

// Collection is the path of kind's objects in namespace ns.
func Collection(kind, ns string) (string, error) {
	c, ok := collections[kind]
	if !ok {
		return "", fmt.Errorf("obsbench never creates a %s", kind)
	}
	return fmt.Sprintf(c, ns), nil
}

// Object is the path of kind's object name in namespace ns.
func Object(kind, ns, name string) (string, error) {
	c, err := Collection(kind, ns)
	return c + "/" + name, err
}

// StatusError is a request the API server refused.
type StatusError struct {
	Method, Path string
	// Code is the HTTP status; Message the server's reason in words.
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, http.StatusText(e.Code), e.Message)
}

// IsNotFound says err is the API server's "no such object".
func IsNotFound(err error) bool { return hasCode(err, http.StatusNotFound) }

// IsAlreadyExists says err is the API server's "the name is taken".
func IsAlreadyExists(err error) bool { return hasCode(err, http.StatusConflict) }

// IsForbidden says err is the API server's "not allowed to this account".
func IsForbidden(err error) bool { return hasCode(err, http.StatusForbidden) }

func hasCode(err error, code int) bool {
	var s *StatusError
	return errors.As(err, &s) && s.Code == code
}

// Create posts obj to collection.
func (a *API) Create(ctx context.Context, collection string, obj any) error {
	return a.Post(ctx, collection, obj, nil)
}

// Post sends in to path and decodes the answer into out (nil: dropped).
func (a *API) Post(ctx context.Context, path string, in, out any) error {
	return a.do(ctx, http.MethodPost, path, nil, in, out)
}

// Get decodes the object at path into out.
func (a *API) Get(ctx context.Context, path string, out any) error {
	return a.do(ctx, http.MethodGet, path, nil, nil, out)
}

// List decodes the objects of collection whose labels match selector
// ("" for all) into out, a list type.
func (a *API) List(ctx context.Context, collection, selector string, out any) error {
	var q url.Values
	if selector != "" {
		q = url.Values{"labelSelector": {selector}}
	}
	return a.do(ctx, http.MethodGet, collection, q, nil, out)
}

// Raw is the body at path as sent (a pod's log).
func (a *API) Raw(ctx context.Context, path string) ([]byte, error) {
	var b bytes.Buffer
	err := a.do(ctx, http.MethodGet, path, nil, nil, &b)
	return b.Bytes(), err
}

// Delete deletes the object at path with opts; nil deletes what it owns
// (a Job's pods) in the background.
func (a *API) Delete(ctx context.Context, path string, opts *metav1.DeleteOptions) error {
	if opts == nil {
		background := metav1.DeletePropagationBackground
		opts = &metav1.DeleteOptions{PropagationPolicy: &background}
	}
	return a.do(ctx, http.MethodDelete, path, nil, opts, nil)
}

func (a *API) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	u := a.base.JoinPath(path)
	u.RawQuery = q.Encode()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		// The API server says why in a Status object; anything else
		// (a proxy's page) is shown as it came.
		var st metav1.Status
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &st) == nil && st.Message != "" {
			msg = st.Message
		}
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Message: msg}
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *bytes.Buffer:
		o.Write(b)
		return nil
	default:
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		return nil
	}
}
