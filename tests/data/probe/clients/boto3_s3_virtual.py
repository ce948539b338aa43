# boto3's default retries on a rest-xml call, S3 ListObjectsV2, with
# virtual-hosted addressing: the request goes to bucket.HOST (the probe's
# `--host` name), which must resolve to 127.0.0.1 as HOST does.
import os, sys
import boto3
from botocore.config import Config

url = os.environ["RETRYLINT_URL"]
client = boto3.client(
    "s3",
    endpoint_url=url,
    region_name="us-east-1",
    aws_access_key_id="AKIDPROBE",
    aws_secret_access_key="probe-secret",
    config=Config(
        connect_timeout=1, read_timeout=1, s3={"addressing_style": "virtual"}
    ),
)
try:
    client.list_objects_v2(Bucket="bucket")
    sys.exit(0)
except Exception as e:
    print(type(e).__name__, str(e)[:200], file=sys.stderr)
    sys.exit(1)
