package mariadb

import (
	"strings"
	"testing"

	"github.com/obsbench/obsbench/internal/server"
)

// A callgrind file in the format's documented shape
// (https://valgrind.org/docs/manual/cl-format.html): name compression
// shared by fn and cfn, relative positions, a call's inclusive cost on
// the line after calls=, and totals at the end.
const callgrindSample = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd: /usr/sbin/mariadbd --defaults-file=my.cnf
part: 1

positions: line
events: Ir

ob=(1) /usr/sbin/mariadbd
fl=(1) ???
fn=(1) do_handle_one_connection(CONNECT*, bool)
0 50
cfl=(1)
cfn=(2) do_command(THD*, bool)
calls=3 0
+2 9000
cfn=(3) do_command_hook(THD*)
calls=1 0
* 700
fn=(2)
0 100
cfn=(6) my_net_read_packet
calls=4 0
0 400
cfn=(4) dispatch_command(enum_server_command, THD*, char*, unsigned int, bool)
calls=3 0
0 8500
fn=(5) srv_master_callback(void*)
0 1200
cfn=(2)
calls=1 0
0 1000
cfn=(6)
calls=1 0
0 50

totals: 12000
`

func TestCallgrindInclusive(t *testing.T) {
	total, inside, err := server.CallgrindInclusive(strings.NewReader(callgrindSample), commandEntry, commandRead)
	if err != nil {
		t.Fatal(err)
	}
	// Two call sites of do_command: 9000 + 1000, less its reads of the
	// socket (400; another function's read is not in it); do_command_hook
	// is another function, dispatch_command is inside do_command already.
	if total != 12000 || inside != 9600 {
		t.Errorf("total %d, inside %d; want 12000 and 9600", total, inside)
	}
	_, whole, err := server.CallgrindInclusive(strings.NewReader(callgrindSample), commandEntry, "")
	if err != nil || whole != 10000 {
		t.Errorf("nothing skipped: inside %d, %v; want 10000", whole, err)
	}
}

func TestCallgrindInclusiveRefuses(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"cut short", strings.Split(callgrindSample, "totals:")[0], "not whole"},
		{"no Ir", strings.Replace(callgrindSample, "events: Ir", "events: Dr", 1), "no Ir"},
		{"inside above total", strings.Replace(callgrindSample, "totals: 12000", "totals: 900", 1), "more than the total"},
		{"bad cost", strings.Replace(callgrindSample, "+2 9000", "+2 9x00", 1), "line 18"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := server.CallgrindInclusive(strings.NewReader(c.text), commandEntry, commandRead)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v; want one saying %q", err, c.want)
			}
		})
	}
}
