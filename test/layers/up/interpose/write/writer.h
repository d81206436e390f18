// The trace file's owner (the fixture of check_layers.py).
#pragma once
