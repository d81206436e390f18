// Part of the analyzer (the fixture of check_layers.py).
#pragma once
