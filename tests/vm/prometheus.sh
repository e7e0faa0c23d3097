# shellcheck shell=bash
# A real Prometheus server for the QEMU tests (tests/vm/fleet), sourced
# after lib.sh: Debian's `prometheus` run as a plain process on the host's
# loopback, with a configuration written here and its TSDB in a folder of
# the caller's, scraping the guests' node-exporters through QEMU's forwards
# (tests/vm/boot --forward) and evaluating a rule file. Queried with curl
# through its HTTP API.

prom_pid="" prom_port="" prom_dir=""

# prom_start DIR TSDB INTERVAL RULES|NAME=PORT...: writes DIR/prometheus.yml
# (job "node": one target 127.0.0.1:PORT per NAME, whose instance label is
# NAME; scrapes and rule evaluations every INTERVAL; the rule files RULES)
# and starts prometheus listening on 127.0.0.1 only, its TSDB in the folder
# TSDB, its log in DIR/prometheus.log. Returns once it answers /-/ready;
# fails, saying why, when it exits or is not ready within 60 s.
prom_start() {
	local dir=$1 tsdb=$2 interval=$3 arg end rules=() targets=()
	shift 3
	for arg in "$@"; do
		case "$arg" in
		*=*) targets+=("$arg") ;;
		*) rules+=("$arg") ;;
		esac
	done
	prom_dir=$dir
	mkdir -p "$dir" "$tsdb"
	{
		echo "global:"
		echo "  scrape_interval: $interval"
		echo "  scrape_timeout: $interval"
		echo "  evaluation_interval: $interval"
		echo "rule_files:"
		for arg in "${rules[@]}"; do
			echo "  - $arg"
		done
		echo "scrape_configs:"
		echo "  - job_name: node"
		echo "    static_configs:"
		for arg in "${targets[@]}"; do
			echo "      - targets: ['127.0.0.1:${arg#*=}']"
			echo "        labels: {instance: ${arg%%=*}}"
		done
	} >"$dir/prometheus.yml"
	promtool check config "$dir/prometheus.yml" >"$dir/check-config.txt" 2>&1 || {
		echo "prom_start: promtool check config rejects $dir/prometheus.yml: $(tr '\n' ' ' <"$dir/check-config.txt")"
		return 1
	}
	prom_port=$(vm_free_port)
	prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$tsdb" \
		--web.listen-address="127.0.0.1:$prom_port" >"$dir/prometheus.log" 2>&1 &
	prom_pid=$!
	end=$((SECONDS + 60))
	until curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:$prom_port/-/ready"; do
		if ! kill -0 "$prom_pid" 2>/dev/null; then
			wait "$prom_pid" 2>/dev/null || true
			prom_pid=""
			echo "prom_start: prometheus exited before it was ready (log: $dir/prometheus.log)"
			return 1
		fi
		if [ "$SECONDS" -ge "$end" ]; then
			echo "prom_start: prometheus on 127.0.0.1:$prom_port not ready within 60 s"
			return 1
		fi
		sleep 0.2
	done
}

# prom_get OUT PATH [CURL-ARGS...]: GET of the HTTP API at PATH (e.g.
# /api/v1/query with --data-urlencode query=...), the JSON body in OUT.
# Fails, printing the body, on an HTTP error or a status other than
# "success".
prom_get() {
	local out=$1 path=$2
	shift 2
	if ! curl -sS --max-time 30 -G -o "$out" "$@" "http://127.0.0.1:$prom_port$path" 2>"$out.err" ||
		! grep -q '"status":"success"' "$out"; then
		echo "prom_get $path $*: $(cat "$out.err" "$out" 2>/dev/null | head -c 2000)"
		return 1
	fi
	rm -f "$out.err"
}

# prom_query OUT EXPR [TIME]: an instant query at TIME (Unix seconds;
# default now), the JSON answer in OUT.
prom_query() {
	local out=$1 expr=$2 at=${3:-}
	prom_get "$out" /api/v1/query --data-urlencode "query=$expr" ${at:+--data-urlencode "time=$at"}
}

# prom_wait OUT EXPR LIMIT: queries EXPR every 2 s until its answer has a
# sample, for at most LIMIT seconds; the last answer is in OUT.
prom_wait() {
	local out=$1 expr=$2 end=$((SECONDS + $3))
	while :; do
		prom_query "$out" "$expr" >/dev/null && grep -q '"result":\[{' "$out" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 2
	done
}

# prom_stop: SIGTERM and a clean exit within 30 s (status 0, its log's
# last words); else SIGKILL. Prints what happened; fails on an unclean end.
prom_stop() {
	local rc=0 end=$((SECONDS + 30))
	[ -n "$prom_pid" ] || return 0
	kill -TERM "$prom_pid" 2>/dev/null || true
	while kill -0 "$prom_pid" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.2
	done
	if kill -0 "$prom_pid" 2>/dev/null; then
		kill -KILL "$prom_pid" 2>/dev/null || true
		wait "$prom_pid" 2>/dev/null || true
		prom_pid=""
		echo "prometheus did not stop within 30 s of SIGTERM: killed"
		return 1
	fi
	wait "$prom_pid" || rc=$?
	prom_pid=""
	if [ "$rc" -ne 0 ] || ! grep -q 'See you next time!' "$prom_dir/prometheus.log"; then
		echo "prometheus ended with status $rc, without its clean-exit message"
		return 1
	fi
	echo "prometheus stopped cleanly on SIGTERM"
}
