// Part of the analyzer's reports stage (the fixture of check_layers.py).
#pragma once
