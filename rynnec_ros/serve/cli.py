"""``rynnec-ros serve``: the site inference server (see ``docs/serving.md``)."""

from __future__ import annotations

import argparse
import logging
import sys

from rynnec_ros.core import wire
from rynnec_ros.model.spec import LOCAL_BACKENDS, EngineSpec, add_engine_args
from rynnec_ros.serve.server import DEFAULT_MAX_CLIENT_QUESTIONS, DEFAULT_MAX_REQUEST_S, DEFAULT_STORE_BYTES

MB = 1 << 20


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("serve", help="site inference server: the engine on Triton for many robots")
    p.add_argument("--checkpoint", required=True, help="checkpoint directory")
    add_engine_args(p, LOCAL_BACKENDS)
    p.add_argument("--host", default="127.0.0.1", help="bind address; off loopback a token is required")
    p.add_argument("--port", type=int, default=wire.DEFAULT_PORT, help="gRPC port (robots connect here)")
    p.add_argument("--http-port", type=int, default=wire.DEFAULT_PORT - 1, help="Triton's HTTP port")
    p.add_argument("--token-file", default="",
                   help=f"file holding the access token robots send as '{wire.TOKEN_HEADER}' (chmod 600); "
                        f"default: the {wire.TOKEN_ENV} environment variable")
    p.add_argument("--token", default="", help="the token itself: visible to every user in `ps`, prefer "
                   "--token-file or the environment variable")
    p.add_argument("--robots", type=int, default=8, help="robots to size the engine's reuse caches for")
    p.add_argument("--store-frames", type=int, default=512, help="uploaded frames kept (LRU)")
    p.add_argument("--store-mb", type=int, default=DEFAULT_STORE_BYTES // MB,
                   help="megabytes of uploaded frames kept (LRU, with --store-frames); "
                        "at least --max-upload-mb")
    p.add_argument("--max-upload-mb", type=int, default=wire.MAX_UPLOAD_BYTES // MB,
                   help=f"most pixel megabytes in one frame upload (robots send at most "
                        f"{wire.UPLOAD_CHUNK_BYTES // MB} per upload, so not less than that)")
    p.add_argument("--batch-window-ms", type=float, default=10.0,
                   help="how long concurrent questions are gathered to encode their frames together (0: off)")
    p.add_argument("--max-image-pixels", type=int, default=wire.MAX_IMAGE_PIXELS,
                   help="most pixels (H×W) of an uploaded frame, and so of a region mask (default: 4K UHD, "
                        "the node's max_image_pixels)")
    p.add_argument("--max-request-s", type=float, default=DEFAULT_MAX_REQUEST_S,
                   help="engine seconds one question may take before its decode is stopped with an error")
    p.add_argument("--max-client-questions", type=int, default=DEFAULT_MAX_CLIENT_QUESTIONS,
                   help="questions one client (robot) may have in flight; more are refused at once")
    p.set_defaults(func=_serve, cache_mb=4096.0)  # the reuse caches serve all robots together


def _serve(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        token, warning = (args.token, "") if args.token else wire.read_token(args.token_file)
        if warning:
            logging.getLogger("rynnec_ros.serve").warning(warning)
        wire.check_bind(args.host, token)
        spec = EngineSpec.from_args(args)
        spec = spec.replace(cache_frames=spec.cache_frames * args.robots,  # one robot's window each
                            cache_windows=spec.cache_windows * args.robots)
        from rynnec_ros.model.backends import load_engine
        from rynnec_ros.serve.server import serve

        engine = load_engine(spec)
        return serve(
            engine,
            host=args.host,
            port=args.port,
            http_port=args.http_port,
            token=token,
            store_frames=args.store_frames,
            store_bytes=args.store_mb * MB,
            max_upload_bytes=args.max_upload_mb * MB,
            batch_window_s=args.batch_window_ms / 1000.0,
            max_image_pixels=args.max_image_pixels,
            max_request_s=args.max_request_s,
            max_client_questions=args.max_client_questions,
            ready=lambda: print(f"ready grpc://{args.host}:{args.port}", flush=True),
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        if exc.name != "pytriton":
            raise
        print(
            "error: nvidia-pytriton is not installed here; see docs/serving.md (requirements-serve.txt)",
            file=sys.stderr,
        )
        return 2
