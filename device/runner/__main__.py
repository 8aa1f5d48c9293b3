import sys

from device import ROOT
from device.spec.deployed_packages import use_deployed_packages
from device.spec.runtime_config import quiet_blas_threads

quiet_blas_threads()                # before NumPy loads
use_deployed_packages(str(ROOT))    # before the runner imports NumPy or a backend: what deploy installed here

from device.runner.serve.agent import main  # noqa: E402

sys.exit(main())
