package fleet

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// Over TCP the coordinator and its workers speak TLS: the assignment
// carries the server's DSN with its password. The coordinator makes a
// certificate of its own for each experiment; a worker is given its
// SHA-256 (the pin) with the token, in one credential, and checks it
// before it sends anything, the token included. The token then proves to
// the coordinator that the worker is one of its own. No authority is
// needed, and nothing outlives the experiment.

// ListenTLS listens on addr (host:port) with a fresh certificate, and
// returns the listener and the certificate's pin.
func ListenTLS(addr string) (net.Listener, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "obsbench coordinator"},
		NotBefore:    now.Add(-time.Hour), // a worker's clock may be behind
		NotAfter:     now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS13,
	}
	return tls.NewListener(ln, cfg), pinOf(der), nil
}

func pinOf(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// Credential is what a worker is given to join (TokenEnv): the token,
// and over TCP the coordinator's pin.
func Credential(token, pin string) string {
	if pin == "" {
		return token
	}
	return token + ":" + pin
}

// ParseCredential splits a credential into token and pin.
func ParseCredential(s string) (token, pin string) {
	token, pin, _ = strings.Cut(s, ":")
	return token, pin
}

// ErrNotPinned means a worker was to reach its coordinator over TCP
// without the pin that proves it is talking to its own coordinator.
var ErrNotPinned = errors.New("no certificate pin in the credential: a worker speaks to its coordinator over TCP only with TLS and the coordinator's pin")

// dialTLS connects to a coordinator at a TCP address and checks, before
// anything is sent, that its certificate is the pinned one.
func dialTLS(ctx context.Context, addr, pin string) (net.Conn, error) {
	if pin == "" {
		return nil, ErrNotPinned
	}
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := tls.Client(raw, &tls.Config{
		MinVersion: tls.VersionTLS13,
		// No authority vouches for the coordinator's certificate: the
		// pin does, in VerifyConnection.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the coordinator sent no certificate")
			}
			if got := pinOf(cs.PeerCertificates[0].Raw); subtle.ConstantTimeCompare([]byte(got), []byte(pin)) != 1 {
				return fmt.Errorf("the certificate at %s is not the coordinator's (SHA-256 %s, want %s)", addr, got, pin)
			}
			return nil
		},
	})
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}
