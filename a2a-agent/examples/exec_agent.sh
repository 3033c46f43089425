#!/bin/sh
# A full A2A agent as a shell script, for `a2a-agent serve --exec-events jsonl`:
#
#   a2a-agent serve --exec 'sh a2a-agent/examples/exec_agent.sh' --exec-events jsonl \
#       --validate-auth false --port 8080
#
# Each stdout line is one JSON event (see docs/agent.md, "--exec as a full agent"):
#   {"type":"status","state":"working","text":"..."}          progress (streamed at once)
#   {"type":"artifact","name":"report.txt","file":"/path"}    a file artifact (raw bytes)
#   {"type":"artifact","name":"log","parts":[..],"append":true,"lastChunk":false}
#   {"type":"message","text":"..."}                           a direct answer, no task
#   {"type":"final","state":"input-required","text":"..."}    end of the turn
# stderr lines are progress too; a non-zero exit fails the task.
#
# The message text is on stdin; $A2A_TASK_ID / $A2A_CONTEXT_ID name the task; on a follow-up
# turn (the caller answers our input-required question) $A2A_FOLLOW_UP=1, $A2A_TASK_STATE is
# the state we left the task in and $A2A_TASK holds the task JSON.
#
# Behaviour: "quick ..." answers directly (no task); "fail" fails; "slow" works until it is
# canceled (at most 60 s); anything else writes a report (progress, a file artifact, or a text
# artifact when the text says "inline"), then asks which format to use; the answer completes
# the task. a2a-agent/tests/common/reference.rs is the same agent written on the library.
set -eu

text=$(cat)

# JSON string escaping for the text we echo back.
esc() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr '\n\r\t' '   '; }

if [ "${A2A_FOLLOW_UP:-}" = "1" ] && [ "${A2A_TASK_STATE:-}" = "input-required" ]; then
    format=$(esc "$text")
    # The same task id as the first turn: its report file is ours to clean up.
    rm -f "${TMPDIR:-/tmp}/a2a-exec-report-${A2A_TASK_ID:-x}.txt"
    echo '{"type":"status","state":"working","text":"converting the report"}'
    echo "{\"type\":\"artifact\",\"name\":\"summary\",\"parts\":[{\"text\":\"format: $format\"}],\"append\":false,\"lastChunk\":false}"
    echo '{"type":"artifact","name":"summary","parts":[{"text":" (done)"}],"append":true,"lastChunk":true}'
    echo "{\"type\":\"final\",\"state\":\"completed\",\"text\":\"Report ready as $format\"}"
    exit 0
fi

case "$text" in
    quick*)
        echo "{\"type\":\"message\",\"text\":\"quick answer to: $(esc "$text")\"}"
        ;;
    fail*)
        echo "the script was asked to fail" >&2
        exit 3
        ;;
    slow*)
        echo '{"type":"status","state":"working","text":"working slowly"}'
        # Canceling the task kills the program and what it started (its process group).
        sleep 60
        echo '{"type":"final","state":"completed","text":"slow job done"}'
        ;;
    *)
        echo '{"type":"status","state":"working","text":"reading the request"}'
        report="${TMPDIR:-/tmp}/a2a-exec-report-${A2A_TASK_ID:-x}.txt"
        printf 'Report for: %s\nlines: %s\n' "$text" "$(printf '%s\n' "$text" | wc -l)" > "$report"
        echo '{"type":"status","state":"working","text":"report written"}'
        case "$text" in
            *inline*)
                echo "{\"type\":\"artifact\",\"name\":\"report.txt\",\"text\":\"Report for: $(esc "$text")\"}" ;;
            *)
                echo "{\"type\":\"artifact\",\"name\":\"report.txt\",\"file\":{\"path\":\"$report\",\"mediaType\":\"text/plain\"}}" ;;
        esac
        echo '{"type":"final","state":"input-required","text":"Which format do you want (csv or md)?"}'
        ;;
esac
