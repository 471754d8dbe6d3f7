"""Unit tests of bench/eta/stop_eta_stats.py: python3 -m unittest discover -s bench/eta"""

import unittest

import stop_eta_stats as stats


class ErrorsBeforeTests(unittest.TestCase):
    def test_takes_the_last_reading_at_or_before_each_horizon(self):
        # Arrival at 1000 s. Readings every 100 s, each saying 50 s too late.
        series = [(t, (1000 - t) + 50) for t in range(0, 1000, 100)]
        series[9] = (900, 40)  # 1 min before: the reading at 900 s says 40 s, really 100 s
        self.assertEqual(stats.errors_before(series, 1000, (600, 300, 60)), [50, 50, -60])

    def test_a_horizon_before_the_first_reading_or_without_an_eta_has_none(self):
        series = [(500, None), (800, 210)]
        self.assertEqual(stats.errors_before(series, 1000, (600, 300, 60)), [None, None, 10])

    def test_no_arrival_gives_no_figure(self):
        self.assertEqual(stats.errors_before([(0, 10)], None, (600,)), [None])


class SummaryTests(unittest.TestCase):
    def test_median_and_worst_keep_the_sign(self):
        self.assertEqual(stats.median([3, -1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(stats.worst([3, -7, 5]), -7)
        self.assertIsNone(stats.median([]))

    def test_summary_counts_the_rows_without_a_figure(self):
        rows = [{"errors": [10, None, 1]}, {"errors": [-30, 5, None]}, {"errors": [None, 2, 3]}]
        self.assertEqual(stats.summary(rows, 0), (-10.0, -30, 2, 3))

    def test_table_separates_stops_from_the_destination(self):
        rows = [{"trace": "t", "stop": "stop-1", "reached": True, "errors": [12, -4, None]},
                {"trace": "t", "stop": "destination", "reached": False, "errors": [None, None, None]}]
        text = stats.table(rows)
        self.assertIn("| t | stop-1 | yes | +12 | -4 | – |", text)
        self.assertIn("| stops | +12 / +12 (1 of 1) | -4 / -4 (1 of 1) | – / – (0 of 1) |", text)
        self.assertIn("| destination | – / – (0 of 1) |", text)

    def test_a_cell_rounds_to_whole_seconds_and_zero_has_no_sign(self):
        self.assertEqual([stats.cell(x) for x in (-0.4, 0.4, 2.6, -12.5, None)], ["0", "0", "+3", "-12", "–"])


if __name__ == "__main__":
    unittest.main()
