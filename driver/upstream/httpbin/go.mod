module wafbench/driver/upstream/httpbin

go 1.26.0

require github.com/mccutchen/go-httpbin/v2 v2.21.0
