// The contract (the fixture of check_layers.py): either side may include it.
#pragma once
