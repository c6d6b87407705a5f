package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package stays a hub to read in a sitting: about 2,000 lines beside
// its tests. Work that grows it belongs in a package of its own, as
// capture, calibrate and counting are. (No function of the tree is longer
// than a screenful: scripts/lint.sh holds that, with scripts/funclen.)
func TestHubStaysSmall(t *testing.T) {
	const maxLines = 2100
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines, read := 0, 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		read++
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(src), "\n")
	}
	if lines > maxLines {
		t.Errorf("internal/app is %d lines beside its tests; want at most %d", lines, maxLines)
	}
	t.Logf("internal/app: %d lines in %d files", lines, read)
}
