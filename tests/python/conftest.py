import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

if os.environ.get("EMBER_FAILURE_LOG"):
    pytest_plugins = ["failure_log"]
