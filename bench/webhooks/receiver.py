#!/usr/bin/env python3
"""A webhook receiver for bench/webhooks/ab.sh: answers 200 to every POST, prints its URL on
stdout, and on SIGTERM writes how many requests it got to the file given as argument."""

import os
import signal
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests-py"))
from webhook_receiver import Receiver  # noqa: E402

receiver = Receiver()
print(receiver.url, flush=True)
done = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: done.set())
done.wait()
with open(sys.argv[1], "w") as out:
    out.write(f"{len(receiver.requests)}\n")
receiver.close()
