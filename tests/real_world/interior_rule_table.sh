#!/usr/bin/env bash
# What the interior-pointer rule changes on real programs: each one under heapkit with
# gperftools' rule (HEAP_CHECK_MAX_POINTER_OFFSET=1024) and LeakSanitizer's (-1), the leaked
# totals of both runs and the report's line on what the other rule would change (the second
# flood, heapcheck/README.md "Interior pointers"), so the two can be checked against each other.
#   interior_rule_table.sh <libheapkit.so> [program name ...]
# Programs: leak_table.sh's, the cases of anonymous_roots_oracles.sh (a python script, gdb
# running python, cc1plus on tests/stress/workloads.cc), lemon on a small grammar, rsync -a between two directories
# (HEAP_CHECK_AT_UNDERSCORE_EXIT: every process checked). One markdown row per program and rule;
# nothing is asserted (the figures go to heapcheck/README.md).
set -uo pipefail
lib=$(realpath "$1"); shift
only=("$@")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/heapkit-interior.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in" "$work/rsync-src"
seq 1 200000 | sed 's/$/ line of text/' | shuf --random-source=<(yes) >"$work/in/lines"
cp /usr/bin/bash "$work/in/bash.bin"
cp -r "$root/heapcheck" "$work/rsync-src/"
python=/usr/bin/python3  # the interpreter, never a wrapper script on PATH (pyenv shims)
cc1plus_line=$(g++ -### -O2 -std=c++20 -c "$root/tests/stress/workloads.cc" -o "$work/out.o" 2>&1 |
               grep -m1 '/cc1plus ' | sed 's/^ *//')
script='import json, collections
d = collections.OrderedDict((str(i), {"v": [i] * 8, "s": "x" * (i % 300)}) for i in range(20000))
print(len(json.dumps(d)))'
printf '%s\n' "$script" >"$work/script.py"
# A small statement-and-expression grammar for lemon (Debian's package has no example).
cat >"$work/grammar.y" <<'GRAMMAR'
%token_type {int}
%left OR.
%left AND.
%nonassoc EQ NE LT GT LE GE.
%left PLUS MINUS.
%left TIMES DIVIDE MOD.
%right NOT.
program ::= stmts.
stmts ::= .
stmts ::= stmts stmt.
stmt ::= expr SEMI.
stmt ::= ID ASSIGN expr SEMI.
stmt ::= IF LPAREN expr RPAREN block.
stmt ::= IF LPAREN expr RPAREN block ELSE block.
stmt ::= WHILE LPAREN expr RPAREN block.
stmt ::= RETURN expr SEMI.
block ::= LBRACE stmts RBRACE.
expr ::= expr PLUS expr.
expr ::= expr MINUS expr.
expr ::= expr TIMES expr.
expr ::= expr DIVIDE expr.
expr ::= expr MOD expr.
expr ::= expr EQ expr.
expr ::= expr NE expr.
expr ::= expr LT expr.
expr ::= expr GT expr.
expr ::= expr LE expr.
expr ::= expr GE expr.
expr ::= expr AND expr.
expr ::= expr OR expr.
expr ::= NOT expr.
expr ::= LPAREN expr RPAREN.
expr ::= ID LPAREN args RPAREN.
expr ::= ID.
expr ::= NUM.
args ::= .
args ::= arglist.
arglist ::= expr.
arglist ::= arglist COMMA expr.
GRAMMAR

programs=(
  "tar-create|tar -cf out.tar -C /usr/include/linux ."
  "sort|sort -n in/lines"
  "xz-T2|xz -T2 -k -c in/bash.bin"
  "git-log|git -C $root log --oneline -n 200"
  "perl-hash|perl -e 'my %h; \$h{\$_} = \$_ x 3 for 1 .. 50000; print scalar(keys %h), \"\\n\"'"
  "python3-json|$python -c 'import json; print(len(json.dumps(list(range(50000)))))'"
  "python3-script|$python script.py"
  "sqlite3|sqlite3 :memory: 'create table t(x); with recursive c(i) as (select 1 union all select i+1 from c where i < 20000) insert into t select i from c; select count(*), sum(x) from t;'"
  "curl-file|curl -s file:///etc/services"
  "openssl-dgst|openssl dgst -sha256 in/bash.bin"
  "gzip|gzip -c in/lines"
  "gdb-python|gdb -nx -batch -ex 'python import json; print(json.dumps(list(range(10))))'"
  "cc1plus|$cc1plus_line"
  "lemon|lemon -T/usr/share/lemon/lempar.c grammar.y"
  "rsync|rsync -a rsync-src/ rsync-dst/"
)

echo "| program | rule | leaked bytes / objects | the other rule's line |"
echo "|---|---|---|---|"
for p in "${programs[@]}"; do
  name=${p%%|*} cmd=${p#*|}
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  tool=${cmd%% *} tool=${tool//\"/}
  command -v "$tool" >/dev/null || continue
  for rule in 1024 -1; do
    rm -rf "$work"/hk.* "$work/rsync-dst"
    (cd "$work" && env LD_PRELOAD="$lib" HEAPCHECK=normal HEAP_CHECK_ERROR_EXIT_CODE=0 \
       HEAP_CHECK_MAX_POINTER_OFFSET=$rule HEAP_CHECK_REPORT_CLEAN=true \
       HEAP_CHECK_AT_UNDERSCORE_EXIT=true HEAP_CHECK_DUMP_DIRECTORY="$work" \
       HEAP_CHECK_REPORT_PATH="$work/hk" timeout 600 bash -c "$cmd" >/dev/null 2>&1)
    # Every checked process's report (timeout, bash, the program and its children; a forked child
    # writes into its parent's file): totals summed, other-rule lines joined.
    totals=$(cat "$work"/hk.* 2>/dev/null |
      sed -nE 's/^Leak check _main_ detected leaks of ([0-9]+) bytes in ([0-9]+) objects$/\1 \2/p' |
      awk '{b += $1; o += $2} END {printf "%d / %d", b, o}')
    checks=$(cat "$work"/hk.* 2>/dev/null | grep -cE '^(Leak check _main_ detected|No leaks found for check)')
    line=$(cat "$work"/hk.* 2>/dev/null | grep -E 'interior pointers beyond' | sed -E 's/ \(HEAP_CHECK.*//' | paste -sd ';' -)
    printf '| %s | %s | %s (%s checks) | %s |\n' "$name" "$rule" "$totals" "$checks" "${line:--}"
  done
done
