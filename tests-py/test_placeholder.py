import unittest


class Placeholder(unittest.TestCase):
    def test_python_suite_runs(self):
        self.assertTrue(True)
