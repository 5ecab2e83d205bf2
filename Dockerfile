FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.txt
COPY . .
# collectstatic needs a key only to import settings; the real one comes from the environment at run time.
RUN SECRET_KEY=build ALLOWED_HOSTS=build python manage.py collectstatic --noinput
RUN useradd --create-home touchstone && mkdir -p /data && chown touchstone /data
USER touchstone
EXPOSE 8000
