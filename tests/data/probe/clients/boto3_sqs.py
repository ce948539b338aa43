# boto3's default retries (botocore's `standard` mode: 3 attempts) on a
# JSON-protocol call, SQS ListQueues, against the probe's URL. Dummy
# credentials; the CA reaches botocore through AWS_CA_BUNDLE (--https).
# read_timeout bounds each attempt (botocore's default is 60 s).
import os, sys
import boto3
from botocore.config import Config

url = os.environ["RETRYLINT_URL"]
client = boto3.client(
    "sqs",
    endpoint_url=url,
    region_name="us-east-1",
    aws_access_key_id="AKIDPROBE",
    aws_secret_access_key="probe-secret",
    config=Config(connect_timeout=1, read_timeout=1),
)
try:
    client.list_queues()
    sys.exit(0)
except Exception as e:
    print(type(e).__name__, str(e)[:200], file=sys.stderr)
    sys.exit(1)
