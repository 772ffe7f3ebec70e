package plugins

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// explain is how a failed result words err: the network failures a user
// can act on as one phrase naming the host and what to check, not as Go's
// chain of dial and lookup errors; any other error as it is.
func explain(err error) any {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("no such host %s: check the URL, or this machine's DNS", dns.Name)
	case errors.As(err, &dns) && dns.IsTimeout:
		return fmt.Sprintf("looking up %s timed out: check this machine's network and DNS", dns.Name)
	case errors.Is(err, syscall.ECONNREFUSED) && errors.As(err, &op) && op.Addr != nil:
		return fmt.Sprintf("%s refused the connection: nothing listens there", op.Addr)
	}
	return err
}

// didYouMean is ", did you mean X?" for the name of names nearest to
// name (at most two edits away, or one it starts), else "".
func didYouMean(name string, names []string) string {
	best, dist := "", 3
	for _, n := range names {
		d := editDistance(strings.ToLower(name), n)
		if strings.HasPrefix(n, strings.ToLower(name)) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < dist {
			best, dist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
