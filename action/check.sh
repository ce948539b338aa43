#!/usr/bin/env bash
# The action's one check run (action.yml): `retrylint check --format sarif`,
# then the job summary and the annotations read from that SARIF log, so all
# three always agree. Never fails itself: check's exit code goes to the
# step's outputs and the action's last step fails the job with it.
#
# Environment: RETRYLINT (the binary), TOPOLOGY, FROM, FAIL_ON, FORMATS, ARGS,
# SARIF_FILE, and GitHub's GITHUB_OUTPUT and GITHUB_STEP_SUMMARY.
set -uo pipefail

want() { case ",${FORMATS// /}," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
output() { echo "$1=$2" >>"${GITHUB_OUTPUT:-/dev/null}"; }
summary() { cat >>"${GITHUB_STEP_SUMMARY:-/dev/null}"; }
# A workflow command's message: %, CR and LF escaped, as the runner reads it.
escape_data() { local s=${1//%/%25}; s=${s//$'\r'/%0D}; printf '%s' "${s//$'\n'/%0A}"; }

args=(check)
[ -n "${TOPOLOGY:-}" ] && args+=("$TOPOLOGY")
# Word splitting is the point: paths separated by spaces or new lines.
# shellcheck disable=SC2206
from=(${FROM:-})
for p in "${from[@]}"; do args+=(--from "$p"); done
case "${FAIL_ON:-}" in
    "") ;;
    error | warning | info) args+=(--fail-on "$FAIL_ON") ;;
    never) args+=(--exit-zero) ;;
    *)
        echo "::error title=retrylint::fail-on must be error, warning, info or never, not \`$(escape_data "$FAIL_ON")\`"
        output exit-code 2
        exit 0
        ;;
esac
# shellcheck disable=SC2206
extra=(${ARGS:-})
args+=("${extra[@]}" --format sarif)

stderr=$(mktemp)
echo "retrylint ${args[*]} > $SARIF_FILE"
"$RETRYLINT" "${args[@]}" >"$SARIF_FILE" 2>"$stderr"
code=$?
cat "$stderr" >&2
output exit-code "$code"

if ! command -v jq >/dev/null; then
    echo "::warning title=retrylint::jq is not installed: no job summary or annotations (the SARIF log is $SARIF_FILE)"
    jq() { return 1; }
fi

# An older retrylint wrote nothing on invalid input; an empty or broken log
# is never uploaded (the upload would fail and hide the real error).
if [ -s "$SARIF_FILE" ] && jq -e '.runs | type == "array"' "$SARIF_FILE" >/dev/null 2>&1; then
    want sarif && output upload true
    output errors "$(jq '[.runs[].results[]? | select(.level == "error")] | length' "$SARIF_FILE")"
    output warnings "$(jq '[.runs[].results[]? | select(.level == "warning")] | length' "$SARIF_FILE")"
    valid=true
else
    valid=false
fi

if [ "$valid" = false ] || [ "$code" -ge 2 ]; then
    # The located error: from the log's notifications when it has them,
    # else from standard error.
    notes=""
    [ "$valid" = true ] && notes=$(jq -r '
        .runs[].invocations[]?.toolExecutionNotifications[]?
        | (.locations[0].physicalLocation // {}) as $l
        | [$l.artifactLocation.uri // "", ($l.region.startLine // "" | tostring),
           ($l.region.startColumn // "" | tostring), .message.text] | @tsv' "$SARIF_FILE")
    if [ -n "$notes" ]; then
        while IFS=$'\t' read -r file line col msg; do
            loc=""
            [ -n "$file" ] && loc="file=$file,"
            [ -n "$line" ] && loc="${loc}line=$line,"
            [ -n "$col" ] && loc="${loc}col=$col,"
            echo "::error ${loc}title=retrylint: invalid input::$(escape_data "$msg")"
        done <<<"$notes"
    else
        # check's first line is `error: FILE:LINE:COLUMN: what and the fix`.
        first=$(head -n 1 "$stderr")
        re='^error: (.+):([0-9]+):([0-9]+): (.*)$'
        if [[ $first =~ $re ]]; then
            echo "::error file=${BASH_REMATCH[1]},line=${BASH_REMATCH[2]},col=${BASH_REMATCH[3]},title=retrylint: invalid input::$(escape_data "${BASH_REMATCH[4]}")"
        else
            echo "::error title=retrylint: check failed (exit $code)::$(escape_data "$(head -c 4000 "$stderr")")"
        fi
    fi
    if want summary; then
        {
            echo "## retrylint: the check could not run (exit $code)"
            echo
            echo '```'
            head -c 60000 "$stderr"
            echo '```'
        } | summary
    fi
    exit 0
fi

if want annotations; then
    # GitHub shows at most 10 errors and 10 warnings per step and 50 in a
    # job; the worst first, and code scanning holds all of them.
    jq -r '
        def prop: gsub("%"; "%25") | gsub("\r"; "%0D") | gsub("\n"; "%0A")
                  | gsub(":"; "%3A") | gsub(","; "%2C");
        def data: gsub("%"; "%25") | gsub("\r"; "%0D") | gsub("\n"; "%0A");
        .runs[] | (.tool.driver.rules // []) as $rules
        | [.results[]? | . as $r
           | {rank: ({"error": 0, "warning": 1}[$r.level] // 2), r: $r}]
        | sort_by(.rank) | .[:50][] | .r
        | (.locations[0].physicalLocation // {}) as $l
        | ({"error": "error", "warning": "warning"}[.level] // "notice") as $cmd
        | ([.ruleId, ($rules[.ruleIndex // -1].name // empty)] | join(" ")) as $title
        | "::\($cmd) file=\($l.artifactLocation.uri // "" | prop),line=\($l.region.startLine // 1),col=\($l.region.startColumn // 1),endColumn=\($l.region.endColumn // 1),title=\($title | prop)::\(.message.text | data)"
    ' "$SARIF_FILE"
fi

if want summary; then
    jq -r --arg code "$code" --arg topology "${TOPOLOGY:-(from sources)}" '
        def cell: gsub("\\|"; "\\|") | gsub("\n"; " ");
        [.runs[].results[]?] as $all
        | (.runs[0].tool.driver.rules // []) as $rules
        | ([$all[] | select(.level == "error")] | length) as $e
        | ([$all[] | select(.level == "warning")] | length) as $w
        | (($all | length) - $e - $w) as $n
        | "## retrylint: `\($topology)`\n",
          (if $code == "0" then "**Passed**" else "**Failed**" end)
            + ": \($e) errors, \($w) warnings, \($n) notes.\n",
          (if ($all | length) == 0 then empty else
            "| level | rule | where | finding |",
            "|---|---|---|---|",
            ($all | sort_by({"error": 0, "warning": 1}[.level] // 2) | .[:200][]
             | (.locations[0].physicalLocation // {}) as $l
             | "| \(.level) | \(.ruleId) \($rules[.ruleIndex // -1].name // "") | `\($l.artifactLocation.uri // "")`:\($l.region.startLine // "") | \(.message.text | cell) |"),
            (if ($all | length) > 200 then "\n\(($all | length) - 200) more in code scanning and the SARIF log." else empty end)
          end),
          "\n`retrylint explain CODE` prints a rule'"'"'s documentation."
    ' "$SARIF_FILE" | summary
fi
exit 0
