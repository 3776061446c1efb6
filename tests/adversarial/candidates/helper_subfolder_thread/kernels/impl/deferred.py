"""A helper two folders down: finishes the work on another thread after forward returned."""

import threading


def launch(function, *args):
    result = {}
    worker = threading.Thread(target=lambda: result.setdefault("out", function(*args)))
    worker.start()
    worker.join()
    return result["out"]
