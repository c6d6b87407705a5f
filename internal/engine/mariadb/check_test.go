package mariadb_test

import (
	"strings"
	"testing"

	_ "github.com/obsbench/obsbench/internal/engine/mariadb"
	"github.com/obsbench/obsbench/internal/observer"
)

// A MariaDB observer with preload: is refused where it is written: MariaDB
// preloads nothing, and Apply would pass the libraries over in silence.
func TestObserverPreloadRefused(t *testing.T) {
	yaml := "- name: x\n  engine: mariadb\n  description: d\n  preload: [server_audit]\n"
	_, err := observer.Parse("f.yaml", []byte(yaml))
	if err == nil || !strings.Contains(err.Error(), "f.yaml:4") || !strings.Contains(err.Error(), "preload: is PostgreSQL's") {
		t.Errorf("Parse = %v; want preload: refused at f.yaml:4", err)
	}
	if _, err := observer.Parse("f.yaml", []byte(strings.Replace(yaml, "preload:", "extensions:", 1))); err != nil {
		t.Errorf("the plugin under extensions: %v", err)
	}
}
