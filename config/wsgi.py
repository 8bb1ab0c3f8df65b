"""The WSGI application (``manage.py runserver`` and WSGI servers); production serves
config.asgi. Refuses the development SECRET_KEY unless DEBUG is on (config.keys)."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from config.keys import refuse_development_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
refuse_development_key(settings)
