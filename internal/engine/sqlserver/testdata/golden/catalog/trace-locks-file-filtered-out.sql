-- trace-locks-file-filtered-out: the lock trace with a filter that never matches (DatabaseName = obsbench_no_such_database): SQL Trace filters after collecting, so it still costs
-- source: catalog/sqlserver.yaml:671

-- apply
DECLARE @id int, @rc int, @maxfilesize bigint = 100, @on bit = 1;
EXEC @rc = sp_trace_create @traceid = @id OUTPUT, @options = 2, @tracefile = N'/var/opt/mssql/log/obsbench_trace_locks_file_filtered_out_20261122T000000', @maxfilesize = @maxfilesize, @stoptime = NULL, @filecount = 10;
IF @rc <> 0 BEGIN RAISERROR(N'sp_trace_create failed with code %d', 16, 1, @rc); RETURN; END;
EXEC sp_trace_setevent @id, 24, 1, @on;
EXEC sp_trace_setevent @id, 24, 3, @on;
EXEC sp_trace_setevent @id, 24, 12, @on;
EXEC sp_trace_setevent @id, 24, 14, @on;
EXEC sp_trace_setevent @id, 24, 22, @on;
EXEC sp_trace_setevent @id, 24, 32, @on;
EXEC sp_trace_setevent @id, 24, 35, @on;
EXEC sp_trace_setevent @id, 23, 1, @on;
EXEC sp_trace_setevent @id, 23, 3, @on;
EXEC sp_trace_setevent @id, 23, 12, @on;
EXEC sp_trace_setevent @id, 23, 14, @on;
EXEC sp_trace_setevent @id, 23, 22, @on;
EXEC sp_trace_setevent @id, 23, 32, @on;
EXEC sp_trace_setevent @id, 23, 35, @on;
EXEC sp_trace_setfilter @id, 35, 0, 0, N'obsbench_no_such_database';
EXEC sp_trace_setstatus @id, 1;
SELECT @id;

-- revert
DECLARE @id int = (SELECT id FROM sys.traces WHERE path LIKE N'/var/opt/mssql/log/obsbench[_]trace[_]locks[_]file[_]filtered[_]out[_]20261122T000000%');
IF @id IS NOT NULL BEGIN EXEC sp_trace_setstatus @id, 0; EXEC sp_trace_setstatus @id, 2; END;
