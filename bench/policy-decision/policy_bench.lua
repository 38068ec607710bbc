-- policy_bench.lua - ns per decision of the Lua peer (tests/lab/job_submit.lua), run by the
-- standalone Lua 5.1 interpreter with a stand-in `slurm` table, on the same job mix as
-- policy_bench.cpp. Fair to the peer: the job tables are built before the clock starts (in
-- batches, since the peer's slurm_job_submit fills defaults into the table it is given, so a
-- table serves once), and the clock is the process CPU clock (os.clock), the one
-- policy_bench.cpp reads. Usage: lua5.1 policy_bench.lua <job_submit.lua> [iterations]
slurm = { SUCCESS = 0, ESLURM_INVALID_ACCOUNT = 2045, ESLURM_INVALID_TIME_LIMIT = 2051,
          ESLURM_ACCOUNTING_POLICY = 2050, log_user = function() end, log_info = function() end }
dofile(arg[1])
local n = tonumber(arg[2] or "1000000")
local NO_VAL, NO_VAL16, NO_VAL64 = 4294967294, 65534, 18446744073709551614
local function job(qos, account, per_job, per_node)
    return { account = account, qos = qos, tres_per_job = per_job, tres_per_node = per_node,
             min_nodes = NO_VAL, num_tasks = NO_VAL, time_limit = NO_VAL, pn_min_memory = NO_VAL64,
             cpus_per_task = NO_VAL16 }
end
local function build(i) -- the mix: project, general, spot, rejected default-account job
    local k = i % 4
    if k == 0 then return job(nil, "team-a", "gres:gpu:2")
    elseif k == 1 then return job("general", "team-a", "gres:gpu:2")
    elseif k == 2 then return job("spot", "team-a", "gres:gpu:2")
    else return job(nil, "default", nil, "gres:gpu:1") end
end
local BATCH = 10000
local part, parts = {}, {}
local accepted, spent, done = 0, 0, 0
while done < n do
    local m = math.min(BATCH, n - done)
    for j = 1, m do part[j] = build(done + j - 1) end
    local submit = slurm_job_submit
    local t0 = os.clock()
    for j = 1, m do
        if submit(part[j], parts, 1001) == 0 then accepted = accepted + 1 end
    end
    spent = spent + (os.clock() - t0)
    done = done + m
end
print(string.format("%.0f", spent * 1e9 / n))
