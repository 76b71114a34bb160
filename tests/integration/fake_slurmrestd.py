#!/usr/bin/env python3
"""A misbehaving slurmrestd on 127.0.0.1 for fault tests: every request gets the same bad answer.

    fake_slurmrestd.py MODE PORT_FILE

MODE: 500 (HTTP 500, empty body), html (200 with an HTML page), truncated (200, JSON cut off),
empty200 (200, empty body), nested (200, {"jobs":[[[...]]]}), unspecified (500 with Slurm's error
-1 and no jobs, as 22.05 says when slurmctld is down), text200 (200, "OK" for a DELETE),
emptyobj (200, "{}" to everything), stringid (200, a job whose job_id is "seven"), unknownstate (a
healthy v0.0.38 answer listing the job asked for in the state FROBNICATING, and accepting its
cancellation), endless (200, a chunked body that never ends), silent (accepts the connection and
never answers), many:N (a healthy v0.0.38 answer listing N running jobs, ids 1..N: for
benchmarks).
The port it listens on is written to PORT_FILE once it accepts connections.
"""
import http.server
import sys
import time

BODIES = {
    "500": (500, b""),
    "html": (200, b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
    "truncated": (200, b'{"meta":{},"errors":[],"jobs":[{"job_id":1,"job_state":"RUNN'),
    "empty200": (200, b""),
    "nested": (200, b'{"meta":{},"errors":[],"jobs":[[[{"job_id":1,"job_state":"COMPLETED"}]]]}'),
    "unspecified": (
        500,
        b'{"meta":{},"errors":[{"description":"Failed while looking for jobs",'
        b'"error_number":-1,"error":"Unspecified error","source":"slurm_load_jobs"}],"jobs":[]}',
    ),
    "text200": (200, b"OK"),
    "emptyobj": (200, b"{}"),
    "stringid": (200, b'{"jobs":[{"job_id":"seven","job_state":"RUNNING"}]}'),
}


def unknown_state(path, method):
    """The job asked for (GET /slurm/v0.0.38/job/ID), alive in a state no Slurm has."""
    if method == "DELETE":
        return 200, b'{"meta":{},"errors":[]}'
    job_id = path.rstrip("/").rsplit("/", 1)[-1]
    if not job_id.isdigit():
        return 200, b'{"meta":{},"errors":[],"jobs":[]}'
    job = (
        '{"job_id":%s,"name":"jg-fault","user_name":"root","job_state":"FROBNICATING",'
        '"state_reason":"None","partition":"markov_gpu","nodes":"classt01","node_count":1,'
        '"submit_time":1795324888,"start_time":1795324889,"time_limit":15,'
        '"standard_output":"","standard_error":"","dependency":"","array_job_id":0,'
        '"array_task_id":null,"exit_code":0,"comment":""}' % job_id
    )
    return 200, ('{"meta":{},"errors":[],"jobs":[%s]}' % job).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        mode = self.server.mode
        if mode == "silent":
            time.sleep(3600)
            return
        if mode == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b'{"jobs":[' + b'1,' * 32768
            try:
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    chunk = b"1," * 32768
            except (BrokenPipeError, ConnectionResetError):
                return
        if mode == "unknownstate":
            status, body = unknown_state(self.path, self.command)
        else:
            status, body = BODIES[mode]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = answer

    def log_message(self, *args):
        pass


def many_jobs(n):
    job = (
        '{"job_id":%d,"name":"train-%d","user_name":"alice","job_state":"RUNNING",'
        '"state_reason":"None","partition":"gpu","nodes":"node%04d","node_count":1,'
        '"tres_per_node":"gres:gpu:a100:4","submit_time":1795324888,"start_time":1795324889,'
        '"end_time":1795497689,"time_limit":2880,"standard_output":"/home/alice/logs/%%x-%%j.out",'
        '"standard_error":"","dependency":"","array_job_id":0,"array_task_id":null,'
        '"array_task_string":"","exit_code":0,"comment":"","current_working_directory":"/home/alice",'
        '"account":"research","qos":"normal","priority":4294901759,"cpus":32,"memory_per_node":65536,'
        '"features":"","batch_host":"node%04d","command":"/home/alice/run.sh"}'
    )
    jobs = ",".join(job % (i, i, i % 1000, i % 1000) for i in range(1, n + 1))
    return ('{"meta":{},"errors":[],"jobs":[%s]}' % jobs).encode()


def main():
    mode, port_file = sys.argv[1], sys.argv[2]
    if mode.startswith("many:"):
        BODIES[mode] = (200, many_jobs(int(mode[5:])))
    # Threads: a silent or endless answer must not keep the next request waiting.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.mode = mode
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os

    os.replace(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
