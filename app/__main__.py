import sys

from app.launch import main

sys.exit(main())
