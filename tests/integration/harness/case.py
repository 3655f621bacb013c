"""A test case that cleans up after itself."""
import os
import shutil
import subprocess
import tempfile
import unittest

from .agent import Agent
from .base import stays, write_file
from .broker import Broker, Subscriber, mqtt_section
from .web import Receiver


# ---------------------------------------------------------------------------------------------------------------
# A test case that cleans up after itself


class TestCase(unittest.TestCase):
    """self.d: a temporary directory, removed after the test; agent(), broker(), sub() and receiver() start
    what they name and stop it after the test (last started, first stopped)."""

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="tw-%s-" % type(self).__name__.lower())
        self.addCleanup(shutil.rmtree, self.d, True)

    @classmethod
    def class_agent(cls, args, **kw):
        """An agent the tests of the class share (from setUpClass): in a directory of its own, killed and removed
        after the last test."""
        d = tempfile.mkdtemp(prefix="tw-%s-" % cls.__name__.lower())
        cls.addClassCleanup(shutil.rmtree, d, True)
        a = Agent(d, args, **kw)
        cls.addClassCleanup(a.kill)
        return a

    def path(self, name, text=None, mode=0o600):
        """D/NAME; written with TEXT when given."""
        p = os.path.join(self.d, name)
        if text is not None:
            write_file(p, text, mode)
        return p

    def agent(self, args, **kw):
        a = Agent(self.d, args, **kw)
        self.addCleanup(a.kill)
        return a

    def broker(self, **kw):
        b = Broker(self.d, **kw).start()
        self.addCleanup(b.stop)
        return b

    def sub(self, port, topics, **kw):
        s = Subscriber(port, topics, **kw)
        self.addCleanup(s.close)
        return s

    def mqtt_agent(self, name, keys, args=("--demo", "--speed", "10"), extra="", web="", stdout=subprocess.DEVNULL,
                   **kw):
        """An agent (-v) publishing with the mqtt KEYS (mqtt_keys()), no state file; EXTRA: more
        configuration; WEB: web.listen. Its stdout is not kept unless STDOUT is None (kept in a file)."""
        config = 'agent:\n  state_file: ""\nweb:\n  listen: "%s"\n' % web + mqtt_section(keys) + extra
        return self.agent(["-v"] + list(args), name=name, config=config, stdout=stdout, **kw)

    def receiver(self, **kw):
        r = Receiver(**kw).start()
        self.addCleanup(r.stop)
        return r

    def spawn(self, argv, **kw):
        """Another program in the background, killed after the test."""
        p = subprocess.Popen(argv, **kw)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p

    def assertStays(self, cond, seconds, msg=None):
        """COND holds for SECONDS (see stays())."""
        if not stays(cond, seconds):
            self.fail(msg() if callable(msg) else (msg or "the condition stopped holding within %.1f s" % seconds))
