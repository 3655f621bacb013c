"""What the integration tests share: the agent under test, a mosquitto broker and an MQTT subscriber, a webhook
receiver, free loopback ports, waiting for a condition, files, HTTP on loopback, and a TestCase that owns a
temporary directory and stops everything its test started.

A test file runs as `test_X.py TEGRAWATCH SOURCE_ROOT [--flag ...] [unittest arguments]`:

    if __name__ == "__main__":
        BIN, SRC = harness.init(needs=("mosquitto",))   # exit 77 (skipped) when a need is missing
        harness.main()

The rules every test keeps (tests/README.md):
- servers listen on 127.0.0.1, on a port the kernel chose (free_port); nothing is sent anywhere else;
- a test waits for a condition with a generous timeout (wait_until, Agent.next_sample, Receiver.wait), never
  for a fixed time; time itself is waited for only where it is the subject: an outage's length (hold) or a
  window in which something must not happen (stays);
- one start and stop policy for the agent (Agent): stderr to a file, stdout (JSON Lines) to a file read as it
  grows, SIGTERM then a bounded wait, SIGKILL at cleanup.
"""
import os as _os

from .agent import Agent
from .base import (BOOT_ID, FIXTURE_BOARD, SANITIZED, UNDER_QEMU, clean_env, copy_board, demo_args, emulator_limit, end_process,
                   flag, free_port, hold, init, library_dir, main, mapped, no_default_web, pid_alive, proc_status_kb, read_bytes, read_jsonl, read_text,
                   recordings, src, stays, tegrawatch, wait_until, write_file)
from .broker import EARLY_RULE, Broker, Subscriber, dedup_seqs, make_tls, mqtt_keys, mqtt_section, parse_spool, publish
from .case import TestCase
from .web import (WEB_PER_IP, WEB_TIMEOUT_S, Receiver, Request, demo_values, forward, header_of, raw_exchange, request,
                  status_of, web_config)

__all__ = ["Agent", "BOOT_ID", "FIXTURE_BOARD", "SANITIZED", "UNDER_QEMU", "clean_env", "copy_board", "demo_args", "emulator_limit",
           "end_process", "flag", "free_port", "hold", "init", "library_dir", "main", "mapped", "no_default_web", "pid_alive", "proc_status_kb", "read_bytes",
           "read_jsonl", "read_text", "recordings", "src", "stays", "tegrawatch", "wait_until", "write_file",
           "EARLY_RULE", "Broker", "Subscriber", "dedup_seqs",
           "make_tls", "mqtt_keys", "mqtt_section", "parse_spool", "publish", "TestCase", "WEB_PER_IP", "WEB_TIMEOUT_S",
           "Receiver", "Request", "demo_values", "forward", "header_of", "raw_exchange", "request", "status_of",
           "web_config"]

# a plain sleeping process that measures its own lateness (probe.py): a timing test's machine allowance
PROBE = _os.path.join(_os.path.dirname(__file__), "probe.py")
