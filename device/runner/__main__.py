import sys

from device.runner.agent import main

sys.exit(main())
