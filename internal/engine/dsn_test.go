package engine

import "testing"

func TestRedactDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"host=db user=u password=s3cret dbname=x", "host=db user=u dbname=x"},
		{"host=db password='a b\\'c' user=u", "host=db user=u"},
		{"PASSWORD = s3cret host=db", "host=db"},
		{"postgres://u:s3cret@db:5432/x?sslmode=disable", "postgres://u@db:5432/x?sslmode=disable"},
		{"postgresql://db/x?password=s3cret&sslmode=disable", "postgresql://db/x?sslmode=disable"},
		{"host=db user=u", "host=db user=u"},
		{"root:s3cret@tcp(127.0.0.1:3306)/obsbench", "root@tcp(127.0.0.1:3306)/obsbench"},
		{"root@unix(/run/mysqld/mysqld.sock)/obsbench", "root@unix(/run/mysqld/mysqld.sock)/obsbench"},
	}
	for _, tt := range tests {
		if got := RedactDSN(tt.in); got != tt.want {
			t.Errorf("RedactDSN(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
