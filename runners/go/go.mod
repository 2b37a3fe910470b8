module writebench/runners/go

go 1.24.0

require golang.org/x/sys v0.40.0
