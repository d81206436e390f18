// A replay file that reaches up into the reports in the <...> form: check_layers.py must
// refuse it. The contract and the standard library it may include in either form.
#include <cumemtrace/contract.h>
#include <reports/report.h>
#include <vector>
